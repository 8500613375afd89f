import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { ERROR_CATALOGUE, REGENERATE_ERROR_REFERENCE, renderErrorReference } from '../src/index.js';

const REFERENCE = resolve(dirname(fileURLToPath(import.meta.url)), '../../../docs/reference/errors.md');

test('docs/reference/errors.md is the error catalogue as it is now', () => {
  expect(
    readFileSync(REFERENCE, 'utf8') === renderErrorReference(),
    `docs/reference/errors.md is stale: run \`${REGENERATE_ERROR_REFERENCE}\` and commit it`,
  ).toBe(true);
});

test('the error reference gives every catalogued code one row with its status and retry', () => {
  const text = renderErrorReference();
  for (const [code, form] of Object.entries(ERROR_CATALOGUE)) {
    const rows = text.split('\n').filter((line) => line.startsWith(`| \`${code}\` |`));
    expect(rows, code).toHaveLength(1);
    expect(rows[0]).toContain(`| ${form.status} | ${form.retryable ? 'yes' : 'no'} |`);
  }
  expect(text).toContain('| `prompt_queue_full` | 503 | yes | 5 s |');
});
