import * as acp from '@agentclientprotocol/sdk';
import type { AcpDaemon } from './acp-daemon.js';
import { AcpHandlerContext, type AcpSessionHost } from './handler-context.js';
import { registerSessionHandlers } from './session-handlers.js';
import { registerSettingHandlers } from './setting-handlers.js';
import { registerTurnHandlers } from './turn-handlers.js';

export type { AcpSessionHost } from './handler-context.js';
export { ACP_LIST_PAGE_SIZE } from './session-list.js';
export { ACP_PROTOCOL_VERSION } from './setting-handlers.js';
export { QWEN_HEARTBEAT } from './turn-handlers.js';

/**
 * The daemon as an ACP agent (PROTOCOL §8): one `AgentApp` per ACP connection, its handlers
 * thin calls into the session bridge. Every error leaves through the context's guard, so a
 * typed daemon error keeps its `data.errorKind` (SPEC BP-10).
 */
export function buildAcpAgent(daemon: AcpDaemon, host: AcpSessionHost): acp.AgentApp {
  const context = new AcpHandlerContext(daemon, host);
  const app = acp.agent({ name: 'sluice' });
  registerSettingHandlers(app, context);
  registerSessionHandlers(app, context);
  return registerTurnHandlers(app, context);
}
