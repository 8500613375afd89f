import { describe, expect, it } from 'vitest';
import { DaemonConfigError, resolveDaemonConfig } from '../../src/config.js';

function refusal(config: Record<string, unknown>): DaemonConfigError {
  try {
    resolveDaemonConfig(config);
  } catch (error) {
    if (error instanceof DaemonConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(config)}`);
}

describe('shared store configuration (--store, docs/fleet.md)', () => {
  it('accepts a postgres URL with the settings that need one', () => {
    const config = resolveDaemonConfig({
      store: 'postgres://sluice@db.internal:5432/sluice',
      advertiseUrl: 'https://node-a.internal:4170',
      storeLeaseMs: 5_000,
      storePurgeVacuum: 'full',
    });
    expect(config).toMatchObject({
      store: 'postgres://sluice@db.internal:5432/sluice',
      storeLeaseMs: 5_000,
      storePurgeVacuum: 'full',
    });
  });

  it('refuses a store that is not a postgres URL naming a database, without quoting its password', () => {
    const wrongScheme = refusal({ store: 'mysql://sluice:hunter2@db/sluice' });
    expect(wrongScheme.setting).toBe('store');
    expect(wrongScheme.message).toBe(
      'store must be a postgres://user@host:port/database URL, got mysql://sluice:***@db/sluice',
    );
    expect(refusal({ store: 'postgres://sluice:hunter2@db' }).message).not.toContain('hunter2');
    expect(refusal({ store: 'not a url' }).setting).toBe('store');
  });

  it('refuses settings of a shared store given without one, and a lease under 100 ms', () => {
    expect(refusal({ advertiseUrl: 'http://a:1' }).message).toBe(
      'advertiseUrl needs store (a postgres:// URL shared by the fleet)',
    );
    expect(refusal({ storeLeaseMs: 5_000 }).setting).toBe('storeLeaseMs');
    expect(refusal({ storePurgeVacuum: 'full' }).setting).toBe('storePurgeVacuum');
    expect(refusal({ store: 'postgres://db/sluice', storePurgeVacuum: 'always' }).setting).toBe(
      'storePurgeVacuum',
    );
    expect(refusal({ store: 'postgres://db/sluice', storeLeaseMs: 50 }).message).toBe(
      'storeLeaseMs must be at least 100, got 50',
    );
    expect(refusal({ store: 'postgres://db/sluice', advertiseUrl: 'ftp://a' }).setting).toBe('advertiseUrl');
  });
});
