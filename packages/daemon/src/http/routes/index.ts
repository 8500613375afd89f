import type { Route } from '../route.js';
import { ACP_ROUTES } from './acp.js';
import { API_DOCS_ROUTES } from './api-docs.js';
import { BUDGET_ROUTES } from './budgets.js';
import { DASHBOARD_ROUTES } from './dashboard.js';
import { DASHBOARD_SIGN_IN_ROUTES, WEB_SIGN_IN_ROUTES } from './sign-in.js';
import { DISCOVERY_ROUTES } from './discovery.js';
import { EVENT_ROUTES } from './events.js';
import { GATEWAY_ROUTES } from './gateway.js';
export { gatewayNotFound, isGatewayUrl } from './gateway.js';
import { METRICS_ROUTE } from './metrics.js';
import { OPENAPI_ROUTE } from './openapi.js';
import { OVERVIEW_ROUTE } from './overview.js';
import { PERMISSION_ROUTES } from './permissions.js';
import { PROMPT_ROUTES } from './prompts.js';
import { RUN_REPORT_ROUTE } from './run-reports.js';
import { SESSION_CLIENT_ROUTES } from './session-clients.js';
import { SESSION_ROUTES } from './sessions.js';
import { WEB_ROUTES } from './web.js';

/**
 * Every route of the daemon, in the order the API document and the route reference list them.
 * The server registers exactly these (a test holds it to what fastify registered); `/openapi.json`,
 * `docs/reference/http-api.md` and the fuzz test are derived from this list. A new route is a
 * `defineRoute` in a module of this folder and its line here.
 */
export const ROUTES: readonly Route[] = [
  ...DISCOVERY_ROUTES,
  OPENAPI_ROUTE,
  ...API_DOCS_ROUTES,
  ...SESSION_ROUTES,
  ...SESSION_CLIENT_ROUTES,
  ...PROMPT_ROUTES,
  ...EVENT_ROUTES,
  ...PERMISSION_ROUTES,
  ...GATEWAY_ROUTES,
  ...ACP_ROUTES,
  ...BUDGET_ROUTES,
  RUN_REPORT_ROUTE,
  OVERVIEW_ROUTE,
  METRICS_ROUTE,
  ...DASHBOARD_ROUTES,
  ...DASHBOARD_SIGN_IN_ROUTES,
  ...WEB_ROUTES,
  ...WEB_SIGN_IN_ROUTES,
];

/**
 * The routes a daemon serves: the metrics and the dashboard only with its counters on, the web
 * client only with `web`.
 */
export function servedRoutes(metrics: boolean, web: boolean): readonly Route[] {
  return ROUTES.filter((route) => (metrics || route.metrics !== true) && (web || route.web !== true));
}
