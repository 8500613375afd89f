import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { REFERENCE_COMMAND, configurationReference } from '../../src/settings/reference.js';
import { flagName } from '../../src/kinds/index.js';
import { SETTING_ENTRIES } from '../../src/settings/index.js';

const path = join(dirname(fileURLToPath(import.meta.url)), '../../../../docs/reference/configuration.md');

test('docs/reference/configuration.md is the one generated from the settings table', () => {
  // Written as generated: docs/reference/ is left out of prettier (.prettierignore).
  const expected = configurationReference();
  const written = readFileSync(path, 'utf8');
  expect(written === expected, `docs/reference/configuration.md is stale: run \`${REFERENCE_COMMAND}\``).toBe(
    true,
  );
});

test('the reference names every flag, its variable and its TOML key', () => {
  const reference = configurationReference();
  for (const [, setting] of SETTING_ENTRIES) {
    if (setting.flag === undefined) continue;
    expect(reference).toContain(`\`${setting.flag}\``);
    expect(reference).toContain(`\`${flagName(setting)}\``);
  }
  expect(reference).toContain('`SLUICE_MAX_SESSIONS`');
  expect(reference).toContain('`SLUICE_TOKEN`, `QWEN_SERVER_TOKEN`');
  expect(reference).toContain('`OPENAI_API_KEY`');
});
