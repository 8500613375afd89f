import { expect, test } from 'vitest';
import { startSluice } from '../helpers/sluice-process.js';

// Issue 19 item 13: `--provider openai` (and `anthropic`) without a key warns at start-up, naming what to set.

test('--provider openai without OPENAI_API_KEY warns at start-up', async () => {
  const sluice = await startSluice(
    ['--provider', 'openai', '--model', 'm', '--base-url', 'http://127.0.0.1:9/v1'],
    { OPENAI_API_KEY: '' },
  );
  try {
    await expect.poll(() => sluice.stderr()).toMatch(/--provider openai: no API key .*set OPENAI_API_KEY/);
  } finally {
    await sluice.stop();
  }
});

test('--provider anthropic without ANTHROPIC_API_KEY warns at start-up', async () => {
  const sluice = await startSluice(
    ['--provider', 'anthropic', '--model', 'm', '--base-url', 'http://127.0.0.1:9'],
    { ANTHROPIC_API_KEY: '' },
  );
  try {
    await expect
      .poll(() => sluice.stderr())
      .toMatch(/--provider anthropic: no API key .*set ANTHROPIC_API_KEY/);
  } finally {
    await sluice.stop();
  }
});
