import { rateTierOf, type RouteDoc } from './route-doc.js';

/** The command that writes `docs/reference/http-api.md` again from the route list. */
export const REGENERATE_ROUTE_REFERENCE = 'npm run docs:http-api';

const SECTIONS: ReadonlyArray<[RouteDoc['tag'], string]> = [
  ['discovery', 'Discovery (PROTOCOL §3)'],
  ['sessions', 'Sessions (PROTOCOL §4, §7)'],
  ['prompts', 'Prompts (PROTOCOL §5)'],
  ['events', 'Events (PROTOCOL §6)'],
  ['permissions', 'Permissions (PROTOCOL §7)'],
  ['gateway', 'Model gateway (OpenAI wire)'],
  ['acp', 'ACP over HTTP (PROTOCOL §8)'],
  ['operations', 'Operations'],
];

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/\|/g, '\\|').trim();
}

function row(route: RouteDoc & { metrics?: boolean; web?: boolean }): string {
  const tier = rateTierOf(route);
  const codes = new Set([...Object.keys(route.responses), ...(tier === undefined ? [] : ['429'])]);
  const statuses = [...codes]
    .sort()
    .map((status) => `\`${status}\``)
    .join(' ');
  const notes = [
    ...(route.openOnLoopback === true ? ['open on loopback unless `--require-auth`'] : []),
    ...(route.metrics === true ? ['not with `--no-metrics`'] : []),
    ...(route.web === true ? ['not with `--no-web`'] : []),
    tier === undefined ? 'no rate limit' : `rate tier \`${tier}\``,
  ];
  const summary = notes.length === 0 ? route.summary : `${route.summary} (${notes.join('; ')})`;
  return `| \`${route.method} ${route.path}\` | ${cell(summary)} | ${statuses} |`;
}

/**
 * `docs/reference/http-api.md`: every route of the one route list, by topic, with its summary and
 * the statuses it answers. Generated (`npm run docs:http-api`); a test fails when it is stale.
 */
export function renderRouteReference(
  routes: ReadonlyArray<RouteDoc & { metrics?: boolean; web?: boolean }>,
): string {
  const lines = [
    '# HTTP API reference',
    '',
    '<!-- Generated from packages/daemon/src/http/routes/index.ts by `' +
      REGENERATE_ROUTE_REFERENCE +
      '`; do not edit. -->',
    '',
    `Every route the daemon serves (${routes.length}), from the same route list the server registers.`,
    '`GET /openapi.json` serves them as an OpenAPI 3.1 document with every parameter, body and answer',
    'schema, a description and an example of each (`GET /docs` shows it in a browser); error',
    'bodies are `{error, code?, ...details}` with a stable `code` (PROTOCOL §1).',
    'With `--rate-limit`, each route counts in its rate tier per client and answers',
    '`429 rate_limit_exceeded` with `Retry-After` past its limit (docs/security.md).',
  ];
  for (const [tag, title] of SECTIONS) {
    const tagged = routes.filter((route) => route.tag === tag);
    if (tagged.length === 0) continue;
    lines.push('', `## ${title}`, '', '| method and path | what it does | answers |', '| --- | --- | --- |');
    lines.push(...tagged.map(row));
  }
  return `${lines.join('\n')}\n`;
}
