import { assertClientIdFormat } from './clients.js';
import { BranchWhilePromptActiveError, InvalidBranchNameError } from './errors.js';
import type { SessionPersistence } from './persistence.js';
import { createDeferred, type BranchTicket, type BranchedSession, type Deferred } from './queue-items.js';
import { SESSION_EVENT } from './session-events.js';
import type { SessionCapacity } from './capacity.js';
import type { Session, SessionParams } from './session.js';

/** Longest branch name `POST /session/:id/branch` accepts. */
export const MAX_BRANCH_NAME_CHARS = 200;

/** Options of `branchSession`. */
export interface BranchSessionOptions {
  /** Display name of the new session; default `<source name> (Branch)`. */
  name?: string;
  /** Registered on the new session (minted when absent). */
  clientId?: string;
}

/** What branching needs: the open sessions, room for new ones, the store, time and ids. */
export interface BranchingContext {
  readonly capacity: SessionCapacity;
  readonly persistence: SessionPersistence;
  readonly wallNow: () => number;
  readonly newId: () => string;
  /** The open session, or `SessionNotFoundError` / `SessionClosingError`. */
  openSession(sessionId: string): Session;
  /** Opens a live session (capacity checked), without saving it. */
  openLive(params: SessionParams): Session;
}

/**
 * Forks sessions (SPEC BP-3, PROTOCOL §7): a branch is admitted synchronously, then waits in
 * the source's FIFO like a prompt, holding room for its session, and opens a `thread` session
 * with a copy of the conversation when its turn comes.
 */
export class Brancher {
  constructor(private readonly context: BranchingContext) {}

  /**
   * Admits a branch — `BranchWhilePromptActiveError` while any prompt is pending,
   * `SessionLimitExceededError` when no session could be opened — and resolves once it is open.
   */
  branch(sessionId: string, options: BranchSessionOptions): Promise<BranchedSession> {
    const name = options.name === undefined ? undefined : validateBranchName(options.name);
    if (options.clientId !== undefined) assertClientIdFormat(options.clientId);
    const source = this.context.openSession(sessionId);
    if (source.runner.pendingPromptCount > 0) throw new BranchWhilePromptActiveError(sessionId);
    const { capacity } = this.context;
    capacity.assertRoom(source.workspaceCwd);
    capacity.reserve(source.workspaceCwd, 1);
    const deferred = createDeferred<BranchedSession>();
    const ticket: BranchTicket = {
      kind: 'branch',
      node: undefined,
      start: () => this.open(source, name, options.clientId, deferred),
      abandon: (error) => {
        capacity.reserve(source.workspaceCwd, -1);
        deferred.reject(error);
      },
    };
    source.runner.enqueueBranch(ticket);
    return deferred.promise;
  }

  /** Opens the branch; `undefined` when that failed (the branch is rejected, the runner goes on). */
  private open(
    source: Session,
    name: string | undefined,
    clientId: string | undefined,
    deferred: Deferred<BranchedSession>,
  ): Promise<void> | undefined {
    const { context } = this;
    context.capacity.reserve(source.workspaceCwd, -1);
    let child: Session;
    let result: BranchedSession;
    try {
      const now = context.wallNow();
      const displayName = name ?? `${source.baseName()} (Branch)`;
      child = context.openLive({
        sessionId: context.newId(),
        workspaceCwd: source.workspaceCwd,
        cwd: source.cwd,
        scope: 'thread',
        createdAt: now,
        updatedAt: now,
        displayName,
        forkedFrom: { sessionId: source.sessionId },
        ...(source.model === undefined ? {} : { model: source.model }),
        conversation: source.conversation.snapshot(),
      });
      const client = child.clients.register(clientId ?? context.newId(), now);
      result = {
        sessionId: child.sessionId,
        workspaceCwd: child.workspaceCwd,
        attached: false,
        clientId: client.clientId,
        createdAt: child.createdAt,
        displayName,
        forkedFrom: { sessionId: source.sessionId },
      };
      source.publish({
        type: SESSION_EVENT.sessionBranched,
        data: { sourceSessionId: source.sessionId, newSessionId: child.sessionId, displayName },
        ...(clientId === undefined ? {} : { originatorClientId: clientId }),
      });
    } catch (error) {
      deferred.reject(error);
      return undefined;
    }
    return (context.persistence.save(child) ?? Promise.resolve()).then(() => deferred.resolve(result));
  }
}

function validateBranchName(name: unknown): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_BRANCH_NAME_CHARS)
    throw new InvalidBranchNameError(name);
  return name.trim();
}
