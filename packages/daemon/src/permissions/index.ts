export * from './errors.js';
export * from './permission-broker.js';
export { parsePermissionOutcome, timeoutChoice, MAX_PERMISSION_OPTIONS } from './validation.js';
export { withPermissions } from './with-permissions.js';
