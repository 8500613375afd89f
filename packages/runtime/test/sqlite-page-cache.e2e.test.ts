import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { resolveSqliteJournalOptions } from '../src/journal/sqlite-journal-options.js';
import { SQLITE_PAGE_CACHE_KIB } from '../src/sqlite-connection.js';

// better-sqlite3 builds SQLite with a 16 MB page cache per connection; the daemon's connections
// hold SQLite's own 2 MiB (docs/decisions/045-sqlite-page-caches.md).

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-page-cache-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/**
 * A fresh process appends 20 MB of ~80 KB JSON records (an agent's model requests) to a WAL
 * database in 100 transactions and reports how much its RSS grew, with the connection bounded
 * as the daemon opens its connections (`openSqlite`) or left at better-sqlite3's default.
 */
function rssGrowthMiB(bounded: boolean): number {
  const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const script = `
    import Database from 'better-sqlite3';
    import fs from 'node:fs';
    import { openSqlite } from ${JSON.stringify(dist)};
    const rss = () => Number(fs.readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\\s+(\\d+)/)[1]) / 1024;
    const file = ${JSON.stringify(path.join(dir, `${bounded}.db`))};
    const db = ${bounded} ? openSqlite(file, 5000) : new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE records (seq INTEGER PRIMARY KEY, body TEXT)');
    const insert = db.prepare('INSERT INTO records (body) VALUES (?)');
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'say what is wrong. '.repeat(4200) }] });
    const before = rss();
    for (let t = 0; t < 100; t++) db.transaction(() => { insert.run(body); insert.run(body); })();
    console.log(rss() - before);
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    encoding: 'utf8',
  });
  return Number(out.trim());
}

describe('SQLite page caches', () => {
  test('a bounded connection holds at most about 2 MiB of pages while appending 20 MB; the library default holds far more', () => {
    expect(rssGrowthMiB(true)).toBeLessThan(8);
    expect(rssGrowthMiB(false)).toBeGreaterThan(12);
  });

  test('the journal’s writer thread is started with the same bound', () => {
    const settings = resolveSqliteJournalOptions({ path: path.join(dir, 'journal.db') });
    expect(settings.writer.pageCacheKiB).toBe(SQLITE_PAGE_CACHE_KIB);
    expect(SQLITE_PAGE_CACHE_KIB).toBe(2048);
  });
});
