import { describeValue } from '@sluice/protocol';

/** The URL schemes a PostgreSQL store may be given with. */
const SCHEMES = new Set(['postgres:', 'postgresql:']);

/**
 * Validates a `--store` URL and returns it parsed; a `RangeError` naming the value (its password
 * hidden) says what to fix.
 */
export function parseStoreUrl(name: string, value: unknown): URL {
  if (typeof value !== 'string' || !URL.canParse(value))
    throw new RangeError(
      `${name} must be a postgres://user@host:port/database URL, got ${describeValue(typeof value === 'string' ? redactStoreUrl(value) : value)}`,
    );
  const url = new URL(value);
  if (!SCHEMES.has(url.protocol))
    throw new RangeError(
      `${name} must be a postgres:// or postgresql:// URL, got ${describeValue(redactStoreUrl(value))}`,
    );
  if (url.pathname.length <= 1)
    throw new RangeError(
      `${name} must name a database (postgres://host/database), got ${describeValue(redactStoreUrl(value))}`,
    );
  return url;
}

/** The URL with its password replaced by `***`, for messages and logs. */
export function redactStoreUrl(value: string): string {
  if (!URL.canParse(value)) return value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  const url = new URL(value);
  if (url.password !== '') url.password = '***';
  return url.toString();
}
