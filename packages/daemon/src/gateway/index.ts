export {
  SESSION_CREDENTIAL_PREFIX,
  SessionCredentials,
  isSessionCredential,
  type GatewayCaller,
} from './session-credentials.js';
