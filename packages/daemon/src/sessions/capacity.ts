import { SessionLimitExceededError } from './errors.js';

/**
 * How many sessions are open, in all and per workspace, against `maxSessions` and
 * `maxSessionsPerWorkspace`; a queued branch holds room for its future session.
 */
export class SessionCapacity {
  private readonly openByWorkspace = new Map<string, number>();
  private readonly reservedByWorkspace = new Map<string, number>();
  private openTotal = 0;
  private reservedTotal = 0;

  constructor(
    readonly maxSessions: number,
    readonly maxSessionsPerWorkspace: number,
  ) {}

  /** Throws `SessionLimitExceededError` when one more session in `workspaceCwd` would not fit. */
  assertRoom(workspaceCwd: string): void {
    if (this.openTotal + this.reservedTotal >= this.maxSessions)
      throw new SessionLimitExceededError(this.maxSessions, 'daemon');
    const inWorkspace =
      (this.openByWorkspace.get(workspaceCwd) ?? 0) + (this.reservedByWorkspace.get(workspaceCwd) ?? 0);
    if (inWorkspace >= this.maxSessionsPerWorkspace)
      throw new SessionLimitExceededError(this.maxSessionsPerWorkspace, 'workspace', workspaceCwd);
  }

  /** Counts an opened (`+1`) or closed (`-1`) session. */
  count(workspaceCwd: string, delta: 1 | -1): void {
    this.openTotal += delta;
    adjust(this.openByWorkspace, workspaceCwd, delta);
  }

  /** Holds (`+1`) or gives back (`-1`) room for a queued branch's future session. */
  reserve(workspaceCwd: string, delta: 1 | -1): void {
    this.reservedTotal += delta;
    adjust(this.reservedByWorkspace, workspaceCwd, delta);
  }
}

function adjust(counts: Map<string, number>, key: string, delta: 1 | -1): void {
  const count = (counts.get(key) ?? 0) + delta;
  if (count > 0) counts.set(key, count);
  else counts.delete(key);
}
