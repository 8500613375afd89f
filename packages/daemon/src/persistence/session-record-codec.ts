// A session's rows and record are converted and checked the same way by every session store
// (the fleet's PostgreSQL one too), in the runtime: packages/runtime/src/session-record-codec.ts.
export { checkRecord, copyMessage, fromMessageRow, toMetadata } from '@sluice/runtime';
