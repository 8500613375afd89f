import { resolve } from 'node:path';
import { parseAgentSpec, type AgentCommand } from '../agents/index.js';
import { DaemonConfigError, type DaemonConfig } from '../config.js';
import type { AgentTable } from './config-file.js';
import type { ServeOptions } from './serve.js';

/** Config keys as the flags that set them, for error messages. */
export const FLAG_OF: Record<string, string> = {
  workspace: '--workspace',
  dataDir: '--data-dir',
  provider: '--provider',
  model: '--model',
  baseURL: '--base-url',
  echoDelayMs: '--echo-delay-ms',
  contextMaxBytes: '--context-max-bytes',
  maxBudgets: '--max-budgets',
  maxPendingPromptsPerSession: '--max-pending-prompts-per-session',
  promptDeadlineMs: '--prompt-deadline-ms',
  maxSessions: '--max-sessions',
  maxSessionsPerWorkspace: '--max-sessions-per-workspace',
  eventRingSize: '--event-ring-size',
  eventRingBytes: '--event-ring-bytes',
  eventMemoryBytes: '--event-memory-bytes',
  modelMaxConcurrency: '--model-max-concurrency',
  modelMaxQueued: '--model-max-queued',
  modelMaxWaiting: '--model-max-waiting',
  modelMaxInflight: '--model-max-inflight',
  modelMaxRequestBytes: '--model-max-request-bytes',
  modelTimeoutMs: '--model-timeout-ms',
  drainTimeoutMs: '--drain-timeout-ms',
  permissionResponseTimeoutMs: '--permission-response-timeout-ms',
  agents: '--agent',
  agentSessionsPerProcess: '--agent-sessions-per-process',
  agentMaxProcesses: '--agent-max-processes',
  agentIdleTimeoutMs: '--agent-idle-timeout-ms',
  agentLivenessTimeoutMs: '--agent-liveness-timeout-ms',
  sessionIdleTimeoutMs: '--session-idle-timeout-ms',
  journalRetentionDays: '--journal-retention-days',
  store: '--store',
  advertiseUrl: '--advertise-url',
  storeLeaseMs: '--store-lease-ms',
  fleetRedis: '--fleet-redis',
  fleetName: '--fleet-name',
  fleetOnOutage: '--fleet-on-outage',
  fleetLeaseTtlMs: '--fleet-lease-ttl-ms',
  fleetRequestsPerMinute: '--fleet-rpm',
  fleetTokensPerMinute: '--fleet-tpm',
};

/** The daemon's configuration from the parsed flags (validated later, naming the flag). */
export function daemonConfig(options: Omit<ServeOptions, 'port' | 'hostname'>): DaemonConfig {
  const config: DaemonConfig = {
    workspace: resolve(options.workspace ?? process.cwd()),
    dataDir: options.dataDir,
    provider: options.provider,
    maxPendingPromptsPerSession: options.maxPendingPromptsPerSession,
  };
  const optional: Array<[keyof DaemonConfig, unknown]> = [
    ['model', options.model],
    ['baseURL', options.baseUrl],
    ['echoDelayMs', options.echoDelayMs],
    ['contextMaxBytes', options.contextMaxBytes],
    ['maxBudgets', options.maxBudgets],
    ['promptDeadlineMs', options.promptDeadlineMs],
    ['maxSessions', options.maxSessions],
    ['maxSessionsPerWorkspace', options.maxSessionsPerWorkspace],
    ['eventRingSize', options.eventRingSize],
    ['eventRingBytes', options.eventRingBytes],
    ['eventMemoryBytes', options.eventMemoryBytes],
    ['modelMaxConcurrency', options.modelMaxConcurrency],
    ['modelMaxQueued', options.modelMaxQueued],
    ['modelMaxWaiting', options.modelMaxWaiting],
    ['modelMaxInflight', options.modelMaxInflight],
    ['modelMaxRequestBytes', options.modelMaxRequestBytes],
    ['modelTimeoutMs', options.modelTimeoutMs],
    ['drainTimeoutMs', options.drainTimeoutMs],
    ['permissionResponseTimeoutMs', options.permissionResponseTimeoutMs],
    ['agents', options.agent?.map(agentSpec)],
    ['agentSessionsPerProcess', options.agentSessionsPerProcess],
    ['agentMaxProcesses', options.agentMaxProcesses],
    ['agentIdleTimeoutMs', options.agentIdleTimeoutMs],
    ['agentLivenessTimeoutMs', options.agentLivenessTimeoutMs],
    ['sessionIdleTimeoutMs', options.sessionIdleTimeoutMs],
    ['journalRetentionDays', options.journalRetentionDays],
    ['store', options.store],
    ['advertiseUrl', options.advertiseUrl],
    ['storeLeaseMs', options.storeLeaseMs],
    ['fleetRedis', options.fleetRedis],
    ['fleetName', options.fleetName],
    ['fleetOnOutage', options.fleetOnOutage],
    ['fleetLeaseTtlMs', options.fleetLeaseTtlMs],
    ['fleetRequestsPerMinute', options.fleetRpm],
    ['fleetTokensPerMinute', options.fleetTpm],
  ];
  for (const [key, value] of optional)
    if (value !== undefined) (config as Record<string, unknown>)[key] = value;
  return config;
}

/** One `--agent` value as a named command; a bad one is a {@link DaemonConfigError} of `agents`. */
function agentSpec(spec: string | AgentTable): AgentCommand {
  if (typeof spec !== 'string') return spec;
  try {
    return parseAgentSpec(spec);
  } catch (error) {
    throw new DaemonConfigError('agents', (error as Error).message);
  }
}
