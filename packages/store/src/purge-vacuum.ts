/**
 * How a purge cleans the tables it deleted from (`--store-purge-vacuum`, PostgreSQL): `plain` is
 * `VACUUM`, which removes the deleted row versions without blocking reads or writes; `full` is
 * `VACUUM (FULL)`, which also rewrites each table into a new file, locking it meanwhile.
 */
export type PurgeVacuumMode = 'plain' | 'full';

/** The modes: the setting's choices and the store's validation. */
export const PURGE_VACUUM_MODES = ['plain', 'full'] as const satisfies readonly PurgeVacuumMode[];
