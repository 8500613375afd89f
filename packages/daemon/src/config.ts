import { describeValue } from '@sluice/protocol';
import { isAbsolute, resolve } from 'node:path';
import { PROVIDERS } from './providers/index.js';
import type { ProviderEntry } from './providers/index.js';
import { SETTING_ENTRIES, type DaemonSettings, type DefaultedSetting } from './settings/index.js';

/**
 * The daemon's configuration as the CLI (or a host) supplies it: every field optional, with the
 * documented defaults. Derived from the settings table (settings/, docs/reference/configuration.md);
 * validated by {@link resolveDaemonConfig}.
 */
export type DaemonConfig = DaemonSettings;

/** The validated configuration, defaults filled in. */
export type ResolvedDaemonConfig = DaemonConfig &
  Required<Pick<DaemonConfig, DefaultedSetting | 'workspace'>>;

/** An invalid configuration value; the message names the setting and the value. */
export class DaemonConfigError extends Error {
  readonly code = 'invalid_config';
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'DaemonConfigError';
  }
}

/** The daemon's settings by their `DaemonConfig` key. */
const RULES = new Map(
  SETTING_ENTRIES.filter(([, setting]) => setting.scope === 'daemon').map(
    ([key, setting]) => [setting.config ?? key, setting] as const,
  ),
);

/** Validates `config`, fills in the defaults and throws {@link DaemonConfigError} naming a bad value. */
export function resolveDaemonConfig(config: DaemonConfig = {}): ResolvedDaemonConfig {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new DaemonConfigError('config', `config must be an object, got ${describeValue(config)}`);
  const resolved: Record<string, unknown> = {};
  for (const [setting, value] of Object.entries(config)) {
    const rule = RULES.get(setting);
    if (rule === undefined)
      throw new DaemonConfigError(setting, `${setting}: unknown setting (got ${describeValue(value)})`);
    if (value === undefined) continue;
    const reason = rule.kind.violation(value);
    if (reason !== undefined)
      throw new DaemonConfigError(setting, `${setting}: ${reason} (got ${describeValue(value)})`);
    resolved[setting] = value;
  }
  for (const [setting, rule] of RULES)
    if (resolved[setting] === undefined && rule.default !== undefined) resolved[setting] = rule.default;
  const data = resolved as unknown as Omit<ResolvedDaemonConfig, 'workspace'> & { workspace?: string };

  const workspace = data.workspace ?? process.cwd();
  if (!isAbsolute(workspace))
    throw new DaemonConfigError(
      'workspace',
      `workspace must be an absolute path, got ${JSON.stringify(workspace)}`,
    );
  const missing = (PROVIDERS[data.provider] as ProviderEntry).missing?.(data);
  if (missing !== undefined) throw new DaemonConfigError(...missing);
  const concurrency = data.modelMaxConcurrency ?? 4;
  const inflight = data.modelMaxInflight ?? Math.max(64, concurrency);
  if (inflight < concurrency)
    throw new DaemonConfigError(
      'modelMaxInflight',
      `modelMaxInflight must be at least modelMaxConcurrency (${concurrency}), got ${inflight}`,
    );
  checkStore(data);
  return { ...data, workspace: resolve(workspace) };
}

/** The shared store's settings: a PostgreSQL URL (its password never quoted back), and those that need one. */
function checkStore(data: DaemonConfig): void {
  if (data.store === undefined) {
    for (const setting of ['advertiseUrl', 'storeLeaseMs', 'storePurgeVacuum'] as const)
      if (data[setting] !== undefined)
        throw new DaemonConfigError(
          setting,
          `${setting} needs store (a postgres:// URL shared by the fleet)`,
        );
    return;
  }
  const url = URL.canParse(data.store) ? new URL(data.store) : undefined;
  if (
    url === undefined ||
    (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') ||
    url.pathname.length <= 1
  ) {
    if (url !== undefined && url.password !== '') url.password = '***';
    const shown = url?.toString() ?? describeValue(data.store.replace(/:[^:@/]*@/, ':***@'));
    throw new DaemonConfigError(
      'store',
      `store must be a postgres://user@host:port/database URL, got ${shown}`,
    );
  }
  if ((data.journalRetentionDays ?? 0) > 0)
    throw new DaemonConfigError(
      'journalRetentionDays',
      'journalRetentionDays works on the SQLite journal only; with store, delete old rows of sluice_journal_records in PostgreSQL instead',
    );
  if (data.storeLeaseMs !== undefined && data.storeLeaseMs < 100)
    throw new DaemonConfigError(
      'storeLeaseMs',
      `storeLeaseMs must be at least 100, got ${data.storeLeaseMs}`,
    );
}
