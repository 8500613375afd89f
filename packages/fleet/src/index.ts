/**
 * Fleet backends of Sluice (docs/architecture.md): implementations of the runtime's and the daemon's
 * ports on shared services, so that several daemons hold one set of model limits (Redis) and
 * one journal and session store (PostgreSQL). Only the CLI loads this package, and only when a
 * fleet is configured: a single-node daemon never loads a Redis or PostgreSQL client.
 */
export * from './postgres/index.js';
export * from './redis/index.js';
