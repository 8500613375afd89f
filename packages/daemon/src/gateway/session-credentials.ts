import { createHash, randomBytes } from 'node:crypto';

/** The prefix of every per-session gateway credential: tells them apart from the daemon token. */
export const SESSION_CREDENTIAL_PREFIX = 'sluice-sess-';

/** Who a gateway call is made for: a session and, while one runs, its prompt. */
export interface GatewayCaller {
  readonly sessionId: string;
  /** The session's running prompt, when a turn is running. */
  readonly promptId: string | undefined;
  /** Aborted when that turn is cancelled, removed, past its deadline or its session closes. */
  readonly signal: AbortSignal | undefined;
  /** The durable budget the running prompt was sent with: its calls are charged to it. */
  readonly budgetId?: string | undefined;
}

interface Entry {
  readonly sessionId: string;
  readonly digest: string;
  promptId: string | undefined;
  signal: AbortSignal | undefined;
  budgetId: string | undefined;
}

/**
 * The credentials an external agent gets for the model gateway, one per session: the agent's
 * model calls carry it as their bearer token, so the gateway knows which session and running
 * prompt every call belongs to. A credential is valid from `issue` until `revoke` (the
 * session's lifetime). Only SHA-256 digests are kept and looked up, so a lookup neither holds
 * the secret nor compares it character by character.
 */
export class SessionCredentials {
  private readonly byDigest = new Map<string, Entry>();
  private readonly bySession = new Map<string, Entry>();

  /** Live credentials (one per session that holds one). */
  get size(): number {
    return this.bySession.size;
  }

  /** A fresh credential for `sessionId`; one issued before for it stops working. */
  issue(sessionId: string): string {
    if (typeof sessionId !== 'string' || sessionId === '')
      throw new TypeError(`sessionId must be a non-empty string, got ${JSON.stringify(sessionId)}`);
    this.revoke(sessionId);
    const token = SESSION_CREDENTIAL_PREFIX + randomBytes(32).toString('base64url');
    const entry: Entry = {
      sessionId,
      digest: digestOf(token),
      promptId: undefined,
      signal: undefined,
      budgetId: undefined,
    };
    this.byDigest.set(entry.digest, entry);
    this.bySession.set(sessionId, entry);
    return token;
  }

  /** Ends the session's credential: calls carrying it are refused from now on. */
  revoke(sessionId: string): void {
    const entry = this.bySession.get(sessionId);
    if (entry === undefined) return;
    this.bySession.delete(sessionId);
    this.byDigest.delete(entry.digest);
  }

  /**
   * The session's turn `promptId` runs: calls made with its credential belong to it, and are
   * charged to `budgetId` when the prompt named a durable budget.
   */
  beginTurn(sessionId: string, promptId: string, signal: AbortSignal, budgetId?: string): void {
    const entry = this.bySession.get(sessionId);
    if (entry === undefined) return;
    entry.promptId = promptId;
    entry.signal = signal;
    entry.budgetId = budgetId;
  }

  /** The turn `promptId` ended; a later turn's `beginTurn` is not undone by a late call. */
  endTurn(sessionId: string, promptId: string): void {
    const entry = this.bySession.get(sessionId);
    if (entry === undefined || entry.promptId !== promptId) return;
    entry.promptId = undefined;
    entry.signal = undefined;
    entry.budgetId = undefined;
  }

  /** The caller a live credential names, else undefined. */
  resolve(token: string): GatewayCaller | undefined {
    if (!token.startsWith(SESSION_CREDENTIAL_PREFIX)) return undefined;
    const entry = this.byDigest.get(digestOf(token));
    if (entry === undefined) return undefined;
    return {
      sessionId: entry.sessionId,
      promptId: entry.promptId,
      signal: entry.signal,
      budgetId: entry.budgetId,
    };
  }
}

/** True when `token` has the shape of a session credential (live or not). */
export function isSessionCredential(token: string): boolean {
  return token.startsWith(SESSION_CREDENTIAL_PREFIX);
}

function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
