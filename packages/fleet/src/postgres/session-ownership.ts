import type { Sql, TransactionSql } from 'postgres';
import type { SessionOwner } from '@sluice/store';

/** What a claim found: whether this node's lease holds, and the other live owner if any. */
export interface ClaimOutcome {
  /** False when this node's row is gone: its lease was lost. */
  live: boolean;
  /** The live node that owns the session instead; `undefined` when this node owns it now. */
  owner: SessionOwner | undefined;
}

interface ClaimRow {
  live: number;
  claimed: number;
  owner: string | null;
  owner_url: string | null;
}

/**
 * Which node has a session live (`sluice_session_owners`): one node at a time. A claim takes a
 * session that no node owns, that this node owns, or whose owner's lease expired; it fails while
 * another node's lease holds. The claim locks this node's row (`FOR KEY SHARE`), so it cannot
 * land after another node settled this one as dead.
 */
export class SessionOwnership {
  constructor(
    private readonly nodeId: string,
    private readonly wallNow: () => number,
  ) {}

  /** Claims `sessionId` for this node, in `sql` (a transaction, when the caller has one). */
  async claim(sql: Sql | TransactionSql, sessionId: string): Promise<ClaimOutcome> {
    const me = this.nodeId;
    const [row] = await sql<ClaimRow[]>`
      WITH me AS (SELECT node_id FROM sluice_nodes WHERE node_id = ${me} FOR KEY SHARE),
      claimed AS (
        INSERT INTO sluice_session_owners (session_id, node_id) SELECT ${sessionId}, node_id FROM me
        ON CONFLICT (session_id) DO UPDATE SET node_id = excluded.node_id
        WHERE sluice_session_owners.node_id = excluded.node_id
           OR NOT EXISTS (SELECT 1 FROM sluice_nodes n
                          WHERE n.node_id = sluice_session_owners.node_id AND n.expires_at >= ${this.wallNow()})
        RETURNING node_id)
      SELECT (SELECT count(*) FROM me)::int AS live, (SELECT count(*) FROM claimed)::int AS claimed,
             o.node_id AS owner, n.advertise_url AS owner_url
      FROM (SELECT 1) AS one
      LEFT JOIN sluice_session_owners o ON o.session_id = ${sessionId}
      LEFT JOIN sluice_nodes n ON n.node_id = o.node_id`;
    if (row === undefined || row.live === 0) return { live: false, owner: undefined };
    if (row.claimed > 0) return { live: true, owner: undefined };
    // Every part of one statement reads the same snapshot: a claim that lost a race to a
    // concurrent first claim saw no owner yet. Read the winner.
    if (row.owner !== null && row.owner !== me)
      return { live: true, owner: ownerOf(row.owner, row.owner_url) };
    const [winner] = await sql<{ owner: string; owner_url: string | null }[]>`
      SELECT o.node_id AS owner, n.advertise_url AS owner_url FROM sluice_session_owners o
      LEFT JOIN sluice_nodes n ON n.node_id = o.node_id WHERE o.session_id = ${sessionId}`;
    return { live: true, owner: ownerOf(winner?.owner ?? 'unknown', winner?.owner_url ?? null) };
  }

  /** Gives up this node's ownership of `sessionId` (it closed there). */
  async release(sql: Sql, sessionId: string): Promise<void> {
    await sql`DELETE FROM sluice_session_owners WHERE session_id = ${sessionId} AND node_id = ${this.nodeId}`;
  }
}

function ownerOf(nodeId: string, url: string | null): SessionOwner {
  return url === null ? { nodeId } : { nodeId, url };
}
