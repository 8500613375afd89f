import { EchoProvider, MAX_TIMER_MS } from '@sluice/runtime';
import { DEFAULT_ECHO_DELAY_MS } from '../defaults.js';
import { int } from '../kinds/index.js';
import { defineProvider } from './provider.js';

/** The built-in echo model: answers with the prompt, after `--echo-delay-ms`. No network, no key. */
export const echo = defineProvider({
  settings: {
    echoDelayMs: {
      flag: '--echo-delay-ms <ms>',
      topic: 'model provider',
      scope: 'daemon',
      kind: int(0, { max: MAX_TIMER_MS }),
      default: DEFAULT_ECHO_DELAY_MS,
      help: 'latency of the echo model',
    },
  },
  create: (config) => new EchoProvider({ latencyMs: config.echoDelayMs }),
  load: async (config) => new EchoProvider({ latencyMs: config.echoDelayMs }),
});
