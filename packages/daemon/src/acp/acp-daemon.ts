import type { ModelCatalogue } from '@sluice/runtime';
import type { PermissionBroker } from '../permissions/index.js';
import type { SessionBridge } from '../sessions/index.js';

/** What ACP serves: the daemon's sessions (with their event streams), permissions and model. */
export interface AcpDaemon {
  readonly bridge: SessionBridge;
  readonly permissions: PermissionBroker;
  /** Names the model every session uses, the catalogue's default (`session/set_model`). */
  readonly models: Pick<ModelCatalogue, 'defaultModel'>;
}
