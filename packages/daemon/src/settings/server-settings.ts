import { MAX_TIMER_MS } from '@sluice/runtime';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT_MS, LOG_LEVEL_NAMES } from '../defaults.js';
import { flag, int, oneOf, origins, text, type SettingTable } from '../kinds/index.js';

/** The HTTP server's settings (`sluice serve` only), and those the command reads itself. */
export const SERVER_SETTINGS = {
  port: {
    flag: '--port <port>',
    topic: 'server',
    scope: 'serve',
    kind: int(0, { max: 65535 }),
    default: 4170,
    help: 'port to listen on (0 = a free port)',
  },
  hostname: {
    flag: '--hostname <host>',
    topic: 'server',
    scope: 'serve',
    kind: text(),
    default: '127.0.0.1',
    help: 'address to bind',
  },
  requestTimeoutMs: {
    flag: '--request-timeout-ms <ms>',
    topic: 'server',
    scope: 'serve',
    kind: int(1, { max: MAX_TIMER_MS }),
    default: DEFAULT_REQUEST_TIMEOUT_MS,
    help: 'a request (headers and body) must arrive within this; answers 408 and closes otherwise',
  },
  maxConnections: {
    flag: '--max-connections <n>',
    topic: 'server',
    scope: 'serve',
    kind: int(1, { max: 1_000_000 }),
    default: DEFAULT_MAX_CONNECTIONS,
    help: 'open connections accepted at once; more are closed',
  },
  metrics: {
    flag: '--no-metrics',
    topic: 'server',
    scope: 'serve',
    kind: flag('negate'),
    help: 'serve neither GET /metrics nor the /dashboard, and keep no counters for them',
  },
  web: {
    flag: '--no-web',
    topic: 'server',
    scope: 'serve',
    kind: flag('negate'),
    help: 'do not serve the web client at / (docs/web.md)',
  },
  sseHeartbeatMs: {
    flag: '--sse-heartbeat-ms <ms>',
    topic: 'server',
    scope: 'serve',
    kind: int(1, { max: MAX_TIMER_MS }),
    hidden: true,
    help: 'SSE heartbeat interval',
  },
  token: {
    flag: '--token <token>',
    topic: 'security',
    scope: 'serve',
    kind: text({ nonEmpty: false }),
    defaultText: 'env SLUICE_TOKEN, then QWEN_SERVER_TOKEN',
    help: 'bearer token',
    ownEnv: [
      ['SLUICE_TOKEN', 'bearer token when --token is not given'],
      ['QWEN_SERVER_TOKEN', 'bearer token when neither --token nor SLUICE_TOKEN is set (as `qwen serve`)'],
    ],
  },
  requireAuth: {
    flag: '--require-auth',
    topic: 'security',
    scope: 'serve',
    kind: flag(),
    help: 'demand the token on loopback too, /health included',
  },
  allowOrigin: {
    flag: '--allow-origin <origin>',
    topic: 'security',
    scope: 'serve',
    kind: origins,
    help: 'allow this browser origin (repeatable)',
  },
  config: {
    flag: '--config <file>',
    topic: 'lifecycle',
    scope: 'command',
    kind: text({ nonEmpty: false }),
    help: 'read flags from a TOML file: each key is a flag without its "--" (port = 4170); flags given here win',
  },
  logLevel: {
    flag: '--log-level <level>',
    topic: 'logging',
    scope: 'command',
    kind: oneOf(LOG_LEVEL_NAMES),
    defaultText: 'info',
    help: 'JSON log lines on stderr at this level and above; debug logs every request',
  },
} as const satisfies SettingTable;
