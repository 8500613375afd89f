// issue 27 (new defaults; the lead ports them into defaults.ts with the flag table)

/** Share of the cgroup's or machine's memory the agent processes may take by default (`--agent-memory-budget-mb`). */
export const AGENT_MEMORY_BUDGET_SHARE = 0.5;
