export { clipStrings, mapError, type MappedError } from './error-map.js';
export { asciiJsonText, jsonSourceOf, parseJsonBody, parseJsonBytes } from './json-text.js';
export { topLevelMembers, type MemberSpan } from './json-members.js';
export { DEFAULT_SSE_HEARTBEAT_MS, writeSse, type SseSource, type SseWriteOptions } from './sse-writer.js';
