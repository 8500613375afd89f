export { ChatAgent, type ChatAgentOptions } from './chat-agent.js';
export {
  AcpAgentPool,
  AgentCrashedError,
  AgentError,
  AgentPoolExhaustedError,
  AgentTurnFailedError,
  AgentUnavailableError,
  AgentUnresponsiveError,
  checkAgentCommands,
  parseAgentSpec,
  splitCommandLine,
  type AcpAgentPoolOptions,
  type AgentCommand,
  type AgentErrorCode,
  type AgentLog,
  type GatewayCredentials,
} from './acp/index.js';
