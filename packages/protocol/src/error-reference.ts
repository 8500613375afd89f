import { ERROR_CATALOGUE, type WireForm } from './error-catalogue.js';

/** The command that writes `docs/reference/errors.md` again from the catalogue. */
export const REGENERATE_ERROR_REFERENCE = 'npm run docs:errors';

function retryAfterOf(form: WireForm): string {
  if (form.retryAfter === undefined) return '';
  return typeof form.retryAfter === 'number' ? `${form.retryAfter} s` : `\`${form.retryAfter}\``;
}

/**
 * `docs/reference/errors.md`: every code of {@link ERROR_CATALOGUE}, in the catalogue's order,
 * with its HTTP status, whether the same request may succeed later and the `Retry-After` its
 * answer carries. Generated (`npm run docs:errors`); a test fails when it is stale.
 */
export function renderErrorReference(
  catalogue: Readonly<Record<string, WireForm>> = ERROR_CATALOGUE,
): string {
  const rows = Object.entries(catalogue).map(
    ([code, form]) =>
      `| \`${code}\` | ${form.status} | ${form.retryable ? 'yes' : 'no'} | ${retryAfterOf(form)} |`,
  );
  return [
    '# Error codes',
    '',
    `<!-- Generated from ERROR_CATALOGUE (packages/protocol/src/error-catalogue.ts) by \`${REGENERATE_ERROR_REFERENCE}\`; do not edit. -->`,
    '',
    'Every error Sluice answers carries one of these stable codes: in a REST body',
    '`{"error": "<message>", "code": "<code>", …}`, in a `turn_error` event, in the model',
    'gateway\'s OpenAI-style `{"error": {"message", "type", "code"}}` and in ACP\'s JSON-RPC',
    '`data.errorKind` (docs/protocol.md §1, §8). **Retryable** says whether the same request may',
    'succeed if sent again later; **Retry-After** is the header the answer carries (an upstream',
    "provider's own status and `Retry-After` replace these for `model_provider_error`).",
    '',
    '| code | HTTP status | retryable | Retry-After |',
    '| ---- | ----------- | --------- | ----------- |',
    ...rows,
    '',
  ].join('\n');
}
