import type { ModelRuntime } from '@sluice/runtime';
import type { PermissionBroker } from '../permissions/index.js';
import type { SessionBridge } from '../sessions/index.js';

/** What ACP serves: the daemon's sessions (with their event streams), permissions and model. */
export interface AcpDaemon {
  readonly bridge: SessionBridge;
  readonly permissions: PermissionBroker;
  /** Names the one model every session uses (`session/set_model`). */
  readonly runtime: Pick<ModelRuntime, 'provider'>;
}
