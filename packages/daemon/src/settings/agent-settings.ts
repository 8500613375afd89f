import { MAX_TIMER_MS } from '@sluice/runtime';
import * as defaults from '../defaults.js';
import { agentList, int, type SettingTable } from '../kinds/index.js';

/** External ACP agents as session backends, and the processes that run them. */
export const AGENT_SETTINGS = {
  agent: {
    flag: '--agent <command>',
    topic: 'agents',
    scope: 'daemon',
    config: 'agents',
    kind: agentList,
    help: 'run sessions on an external ACP agent over stdio, e.g. "qwen --acp"; repeatable as name="command" (the first is the default, POST /session {agent} picks one)',
  },
  agentSessionsPerProcess: {
    flag: '--agent-sessions-per-process <n>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(1),
    default: defaults.DEFAULT_AGENT_SESSIONS_PER_PROCESS,
    help: 'sessions one agent process hosts',
  },
  agentSpareSessions: {
    flag: '--agent-spare-sessions <n>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(0, { max: 1_024 }),
    default: defaults.DEFAULT_AGENT_SPARE_SESSIONS,
    help: 'agent sessions each shared agent process opens ahead while idle, so that creating a session does not wait for the agent; 0 = none',
  },
  agentMaxProcesses: {
    flag: '--agent-max-processes <n>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(1),
    default: defaults.DEFAULT_AGENT_MAX_PROCESSES,
    help: 'agent processes at once',
  },
  agentIdleTimeoutMs: {
    flag: '--agent-idle-timeout-ms <ms>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(1, { max: MAX_TIMER_MS }),
    default: defaults.DEFAULT_AGENT_IDLE_TIMEOUT_MS,
    help: 'an agent process without a running turn is stopped after this long',
  },
  agentLivenessTimeoutMs: {
    flag: '--agent-liveness-timeout-ms <ms>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(1, { max: MAX_TIMER_MS }),
    default: defaults.DEFAULT_AGENT_LIVENESS_TIMEOUT_MS,
    help: 'an agent process that leaves a liveness probe unanswered this long is killed',
  },
  agentMemoryBudgetMb: {
    flag: '--agent-memory-budget-mb <mb>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(1, { max: 16_777_216 }),
    defaultText: "half the cgroup's or the machine's memory",
    help: "bound of the agent processes' memory: the RSS of their process trees together; past it new sessions share the existing processes, then POST /session answers 503 agent_capacity",
  },
  agentStartTimeoutMs: {
    flag: '--agent-start-timeout-ms <ms>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(1, { max: MAX_TIMER_MS }),
    default: defaults.DEFAULT_AGENT_START_TIMEOUT_MS,
    help: 'an agent that does not answer initialize, session/new or session/load this long is unavailable',
  },
  agentTurnIdleTimeoutMs: {
    flag: '--agent-turn-idle-timeout-ms <ms>',
    topic: 'agents',
    scope: 'daemon',
    kind: int(0, { max: MAX_TIMER_MS }),
    default: defaults.DEFAULT_AGENT_TURN_IDLE_TIMEOUT_MS,
    help: 'a turn with neither agent output nor a model call this long ends agent_unresponsive; 0 = never',
  },
} as const satisfies SettingTable;
