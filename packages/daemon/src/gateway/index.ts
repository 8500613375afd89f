export {
  AGENT_SESSION_HEADER,
  SESSION_CREDENTIAL_PREFIX,
  SessionCredentials,
  isSessionCredential,
  type GatewayCaller,
} from './session-credentials.js';
export { InvalidChatRequestError, readChatRequest, type ChatRequest } from './chat-request.js';
export {
  ChunkWriter,
  DONE_FRAME,
  completionBody,
  frame,
  openAIError,
  type CompletionHead,
  type OpenAIErrorAnswer,
} from './chat-response.js';
export { promptCalls, type PromptCall } from './prompt-calls.js';
