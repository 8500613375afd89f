import * as acp from '@agentclientprotocol/sdk';
import { describeValue } from '@sluice/protocol';
import { daemonVersion } from '../version.js';
import { unsupportedSetting } from './errors.js';
import type { AcpHandlerContext } from './handler-context.js';
import { setModelParams } from './method-params.js';

/** The ACP protocol version this daemon speaks (stable v1). */
export const ACP_PROTOCOL_VERSION = acp.PROTOCOL_VERSION;

/** Registers `initialize` and the session settings, which a daemon with one model refuses. */
export function registerSettingHandlers(app: acp.AgentApp, context: AcpHandlerContext): acp.AgentApp {
  const { bridge } = context;
  return app
    .onRequest('initialize', context.guard('initialize', initialize))
    .onRequest(
      'session/set_mode',
      context.guard('session/set_mode', (params: acp.SetSessionModeRequest): acp.SetSessionModeResponse => {
        bridge.status(params.sessionId);
        throw unsupportedSetting('mode', params.modeId);
      }),
    )
    .onRequest(
      'session/set_config_option',
      context.guard(
        'session/set_config_option',
        (params: acp.SetSessionConfigOptionRequest): acp.SetSessionConfigOptionResponse => {
          bridge.status(params.sessionId);
          throw unsupportedSetting(`config option ${describeValue(params.configId)}`, params.value);
        },
      ),
    )
    .onRequest(
      'session/set_model',
      setModelParams,
      context.guard(
        'session/set_model',
        (params: { sessionId: string; modelId: string }): Record<string, never> => {
          bridge.status(params.sessionId);
          // One model serves every session; naming it again is accepted, any other is not.
          if (params.modelId === context.daemon.runtime.provider.defaultModel) return {};
          throw unsupportedSetting('model', params.modelId);
        },
      ),
    );
}

function initialize(params: acp.InitializeRequest): acp.InitializeResponse {
  return {
    protocolVersion: Math.max(1, Math.min(params.protocolVersion, ACP_PROTOCOL_VERSION)),
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: false },
      mcpCapabilities: { http: false, sse: false },
      sessionCapabilities: { list: {}, resume: {}, close: {} },
    },
    agentInfo: { name: 'sluice', version: daemonVersion() },
    authMethods: [],
  };
}
