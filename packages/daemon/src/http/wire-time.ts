/** A session shape with the daemon's epoch-millisecond timestamps. */
interface Timestamped {
  createdAt?: number;
  updatedAt?: number;
}

/** The same shape with the timestamps as the wire carries them. */
export type WireTimes<T extends Timestamped> = Omit<T, 'createdAt' | 'updatedAt'> & {
  [K in keyof T & ('createdAt' | 'updatedAt')]: string;
};

/**
 * Session `createdAt` / `updatedAt` as ISO 8601 strings, as the reference daemon sends them and
 * its client types them (`DaemonSession.createdAt: string`). Internally they stay epoch ms.
 */
export function withWireTimes<T extends Timestamped>(value: T): WireTimes<T> {
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (typeof value.createdAt === 'number') out['createdAt'] = new Date(value.createdAt).toISOString();
  if (typeof value.updatedAt === 'number') out['updatedAt'] = new Date(value.updatedAt).toISOString();
  return out as WireTimes<T>;
}
