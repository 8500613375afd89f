import { createHash, randomBytes } from 'node:crypto';

/** The prefix of every per-session gateway credential: tells them apart from the daemon token. */
export const SESSION_CREDENTIAL_PREFIX = 'sluice-sess-';

/**
 * The header naming the agent's own session id on a gateway call of a shared agent process
 * (qwen fills it per request from its `customHeaders` `${session_id}` placeholder): with the
 * process's credential it attributes the call to that session. docs/decisions/030.
 */
export const AGENT_SESSION_HEADER = 'x-sluice-agent-session';

/** Who a gateway call is made for: a session and, while one runs, its prompt. */
export interface GatewayCaller {
  readonly sessionId: string;
  /** The session's running prompt, when a turn is running. */
  readonly promptId: string | undefined;
  /** Aborted when that turn is cancelled, removed, past its deadline or its session closes. */
  readonly signal: AbortSignal | undefined;
  /** The durable budget the running prompt was sent with: its calls are charged to it. */
  readonly budgetId?: string | undefined;
  /**
   * The budgets attached to the session: those its prompts were run with. Its calls may name
   * only these (`X-Sluice-Budget`); none when absent. docs/decisions/033.
   */
  readonly budgets?: ReadonlySet<string>;
  /**
   * The catalogue model the running turn's session picked, when it is not the default: a call
   * naming the default (its process's `OPENAI_MODEL`) goes to it (docs/decisions/037).
   */
  readonly model?: string | undefined;
}

interface Entry {
  /** The session, or for a shared process's credential the process's key. */
  readonly sessionId: string;
  readonly digest: string;
  /** A shared process's credential: its calls name their session with {@link AGENT_SESSION_HEADER}. */
  readonly shared: boolean;
}

interface RunningTurn {
  readonly promptId: string;
  readonly signal: AbortSignal;
  readonly budgetId: string | undefined;
  readonly model: string | undefined;
}

/**
 * The credentials an external agent gets for the model gateway, one per session (or one per
 * shared agent process, whose calls name their session by {@link AGENT_SESSION_HEADER}): the
 * agent's model calls carry it as their bearer token, so the gateway knows which session and
 * running prompt every call belongs to. A credential is valid from `issue` until `revoke` (the
 * session's lifetime). Only SHA-256 digests are kept and looked up, so a lookup neither holds
 * the secret nor compares it character by character.
 */
export class SessionCredentials {
  private readonly byDigest = new Map<string, Entry>();
  private readonly bySession = new Map<string, Entry>();
  private readonly turns = new Map<string, RunningTurn>();
  /** Per session: the budgets its turns ran with, the only ones its calls may name. */
  private readonly attached = new Map<string, Set<string>>();
  /** Per shared process key: the agent's session ids of its sessions → Sluice session ids. */
  private readonly agentSessions = new Map<string, Map<string, string>>();

  /** Live credentials (one per session that holds one). */
  get size(): number {
    return this.bySession.size;
  }

  /** A fresh credential for `sessionId`; one issued before for it stops working. */
  issue(sessionId: string): string {
    return this.issueEntry(sessionId, false);
  }

  /**
   * A fresh credential for the shared agent process `key`: a call carrying it belongs to the
   * session its {@link AGENT_SESSION_HEADER} names among those bound to `key`.
   */
  issueShared(key: string): string {
    const token = this.issueEntry(key, true);
    this.agentSessions.set(key, new Map());
    return token;
  }

  /** The agent's session `agentSessionId` in shared process `key` is Sluice's `sessionId`. */
  bindAgentSession(key: string, agentSessionId: string, sessionId: string): void {
    this.agentSessions.get(key)?.set(agentSessionId, sessionId);
  }

  /** That agent session left process `key`: calls naming it are refused from now on. */
  unbindAgentSession(key: string, agentSessionId: string): void {
    const sessions = this.agentSessions.get(key);
    const sessionId = sessions?.get(agentSessionId);
    sessions?.delete(agentSessionId);
    if (sessionId !== undefined) this.attached.delete(sessionId);
  }

  /** Ends the session's (or shared process's) credential: calls carrying it are refused from now on. */
  revoke(sessionId: string): void {
    this.turns.delete(sessionId);
    this.attached.delete(sessionId);
    const entry = this.bySession.get(sessionId);
    if (entry === undefined) return;
    this.bySession.delete(sessionId);
    this.byDigest.delete(entry.digest);
    if (entry.shared) this.agentSessions.delete(sessionId);
  }

  private issueEntry(sessionId: string, shared: boolean): string {
    if (typeof sessionId !== 'string' || sessionId === '')
      throw new TypeError(`sessionId must be a non-empty string, got ${JSON.stringify(sessionId)}`);
    this.revoke(sessionId);
    const token = SESSION_CREDENTIAL_PREFIX + randomBytes(32).toString('base64url');
    const entry: Entry = { sessionId, digest: digestOf(token), shared };
    this.byDigest.set(entry.digest, entry);
    this.bySession.set(sessionId, entry);
    return token;
  }

  /**
   * The session's turn `promptId` runs: calls made with its credential belong to it, and are
   * charged to `budgetId` when the prompt named a durable budget, which is attached to the
   * session from now on (its calls may name it after the turn, too) until the credential ends.
   * The turn's calls that name the default model go to `model`, the session's own, when given.
   */
  beginTurn(
    sessionId: string,
    promptId: string,
    signal: AbortSignal,
    budgetId?: string,
    model?: string,
  ): void {
    this.turns.set(sessionId, { promptId, signal, budgetId, model });
    if (budgetId === undefined) return;
    const attached = this.attached.get(sessionId);
    if (attached === undefined) this.attached.set(sessionId, new Set([budgetId]));
    else attached.add(budgetId);
  }

  /** The turn `promptId` ended; a later turn's `beginTurn` is not undone by a late call. */
  endTurn(sessionId: string, promptId: string): void {
    if (this.turns.get(sessionId)?.promptId === promptId) this.turns.delete(sessionId);
  }

  /**
   * The caller a live credential names, else undefined. For a shared process's credential,
   * `agentSession` (the {@link AGENT_SESSION_HEADER}) picks the session; one naming no session
   * of that process is refused; without it the call is the process's own, unless the process
   * hosts exactly one session.
   */
  resolve(token: string, agentSession?: string): GatewayCaller | undefined {
    if (!token.startsWith(SESSION_CREDENTIAL_PREFIX)) return undefined;
    const entry = this.byDigest.get(digestOf(token));
    if (entry === undefined) return undefined;
    let sessionId = entry.sessionId;
    if (entry.shared) {
      const sessions = this.agentSessions.get(entry.sessionId);
      if (agentSession !== undefined) {
        const named = sessions?.get(agentSession);
        if (named === undefined) return undefined;
        sessionId = named;
      } else if (sessions?.size === 1) sessionId = [...sessions.values()][0]!;
    }
    const turn = this.turns.get(sessionId);
    return {
      sessionId,
      promptId: turn?.promptId,
      signal: turn?.signal,
      budgetId: turn?.budgetId,
      model: turn?.model,
      budgets: this.attached.get(sessionId) ?? NO_BUDGETS,
    };
  }
}

/** True when `token` has the shape of a session credential (live or not). */
export function isSessionCredential(token: string): boolean {
  return token.startsWith(SESSION_CREDENTIAL_PREFIX);
}

const NO_BUDGETS: ReadonlySet<string> = new Set();

function digestOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}
