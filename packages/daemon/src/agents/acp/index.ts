export { AcpAgentPool, type AcpAgentPoolOptions } from './acp-agent-pool.js';
export type { AgentLog } from './agent-process.js';
export { checkAgentCommands, parseAgentSpec, splitCommandLine, type AgentCommand } from './command-line.js';
export {
  AgentCapacityError,
  AgentCrashedError,
  AgentError,
  AgentPoolExhaustedError,
  AgentTurnFailedError,
  AgentUnavailableError,
  AgentUnresponsiveError,
  type AgentErrorCode,
} from './errors.js';
export type { GatewayCredentials } from './process-pool.js';
export type { AgentPoolReport, AgentProcessReport } from './pool-report.js';
