import { join } from 'node:path';
import Database from 'better-sqlite3';

/** The stored conversation of `sessionId` in `dataDir`'s SQLite file, read read-only. */
export function storedMessages(dataDir: string, sessionId: string): Array<{ role: string; content: string }> {
  const db = new Database(join(dataDir, 'journal.db'), { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare('SELECT role, content FROM sluice_session_messages WHERE session_id = ? ORDER BY seq')
      .all(sessionId) as Array<{ role: string; content: string }>;
  } finally {
    db.close();
  }
}
