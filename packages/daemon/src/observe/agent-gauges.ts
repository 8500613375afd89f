import type { AgentPoolReport } from '../agents/index.js';

type Series = Array<{ labels: Record<string, string>; value: number }>;
type Define = (name: string, help: string, labelNames: string[], read: () => number | Series) => void;

/** The agent processes' gauges (issue 27): sessions per process, their trees' RSS, the memory budget. */
export function registerAgentGauges(report: () => AgentPoolReport | undefined, gauge: Define): void {
  const perProcess = (read: (p: AgentPoolReport['processes'][number]) => number) => (): Series =>
    (report()?.processes ?? []).map((p) => ({
      labels: { pid: String(p.pid ?? ''), agent: p.agent },
      value: read(p),
    }));
  gauge('sluice_agent_sessions', 'Sessions open in external agent processes.', [], () =>
    (report()?.processes ?? []).reduce((sum, p) => sum + p.sessions, 0),
  );
  gauge(
    'sluice_agent_rss_bytes',
    "Resident memory of the external agent processes' trees together.",
    [],
    () => report()?.rssBytes ?? 0,
  );
  gauge(
    'sluice_agent_memory_budget_bytes',
    "Bound of the agent processes' memory (--agent-memory-budget-mb).",
    [],
    () => report()?.memoryBudgetBytes ?? 0,
  );
  gauge(
    'sluice_agent_process_sessions',
    'Sessions open in each agent process.',
    ['pid', 'agent'],
    perProcess((p) => p.sessions),
  );
  gauge(
    'sluice_agent_process_spare_sessions',
    'Agent sessions each agent process opened ahead, ready for creates to adopt (--agent-spare-sessions).',
    ['pid', 'agent'],
    perProcess((p) => p.spares),
  );
  gauge(
    'sluice_agent_process_rss_bytes',
    "Resident memory of each agent process's tree.",
    ['pid', 'agent'],
    perProcess((p) => p.rssBytes),
  );
}
