import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DaemonConfigError } from '../../src/config.js';
import { JOURNAL_FILE, prepareDataDir } from '../../src/persistence/data-dir.js';

let dir: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-data-dir-'));
});

afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function refusal(dataDir: string): DaemonConfigError {
  try {
    prepareDataDir(dataDir);
  } catch (error) {
    expect(error).toBeInstanceOf(DaemonConfigError);
    expect((error as DaemonConfigError).setting).toBe('dataDir');
    return error as DaemonConfigError;
  }
  throw new Error(`prepareDataDir accepted ${dataDir}`);
}

describe('prepareDataDir', () => {
  test('creates a missing directory only its owner may enter, and an empty private journal file', () => {
    const dataDir = path.join(dir, 'a', 'b');
    expect(prepareDataDir(dataDir)).toBe(path.join(dataDir, JOURNAL_FILE));
    expect(fs.statSync(dataDir).isDirectory()).toBe(true);
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    const journal = fs.statSync(path.join(dataDir, JOURNAL_FILE));
    expect(journal.size).toBe(0);
    expect(journal.mode & 0o777).toBe(0o600);
  });

  test('refuses a data directory other users may write to, saying how to fix it', () => {
    fs.chmodSync(dir, 0o777);
    expect(refusal(dir).message).toMatch(/writable by other users \(mode 777\).*chmod 700/);
    fs.chmodSync(dir, 0o770);
    expect(refusal(dir).message).toMatch(/mode 770/);
  });

  test('narrows a journal file an older build left readable by others to its owner', () => {
    fs.writeFileSync(path.join(dir, JOURNAL_FILE), '', { mode: 0o644 });
    fs.chmodSync(path.join(dir, JOURNAL_FILE), 0o644);
    prepareDataDir(dir);
    expect(fs.statSync(path.join(dir, JOURNAL_FILE)).mode & 0o777).toBe(0o600);
  });

  test('accepts an empty journal file and a SQLite one', () => {
    fs.writeFileSync(path.join(dir, JOURNAL_FILE), '');
    expect(prepareDataDir(dir)).toBe(path.join(dir, JOURNAL_FILE));
    fs.rmSync(path.join(dir, JOURNAL_FILE));
    const db = new Database(path.join(dir, JOURNAL_FILE));
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(prepareDataDir(dir)).toBe(path.join(dir, JOURNAL_FILE));
  });

  test('refuses a path below a file, naming it', () => {
    const file = path.join(dir, 'file');
    fs.writeFileSync(file, 'x');
    expect(refusal(path.join(file, 'data')).message).toMatch(
      /cannot create directory ".*file\/data" \(ENOTDIR\)/,
    );
    expect(refusal(file).message).toMatch(/cannot create directory|is not a directory/);
  });

  test('refuses a journal.db that is a directory or not a SQLite database', () => {
    fs.mkdirSync(path.join(dir, JOURNAL_FILE));
    expect(refusal(dir).message).toContain(`"${path.join(dir, JOURNAL_FILE)}" is not a file`);
    fs.rmdirSync(path.join(dir, JOURNAL_FILE));
    fs.writeFileSync(path.join(dir, JOURNAL_FILE), 'definitely not SQLite, but long enough');
    expect(refusal(dir).message).toContain('is not a SQLite database');
    fs.writeFileSync(path.join(dir, JOURNAL_FILE), 'short');
    expect(refusal(dir).message).toContain('is not a SQLite database');
  });
});
