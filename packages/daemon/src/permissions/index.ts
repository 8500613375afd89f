export {
  InvalidOptionIdError,
  InvalidPermissionOutcomeError,
  InvalidPermissionRequestError,
  PermissionError,
  PermissionLimitExceededError,
  PermissionRequestNotFoundError,
  type PermissionErrorCode,
} from './errors.js';
export {
  DEFAULT_MAX_OPEN_PERMISSIONS_PER_SESSION,
  DEFAULT_MAX_RESOLVED_PERMISSIONS,
  DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS,
  PERMISSION_EVENT,
  PermissionBroker,
  withOpenPermissions,
  type OpenPermissionInfo,
  type PermissionAskContext,
  type PermissionBrokerOptions,
  type PermissionResolution,
  type PermissionVoteContext,
} from './permission-broker.js';
export {
  parsePermissionOutcome,
  timeoutChoice,
  MAX_PERMISSION_OPTIONS,
  MAX_PERMISSION_OPTION_ID_CHARS,
} from './validation.js';
export { withPermissions } from './with-permissions.js';
