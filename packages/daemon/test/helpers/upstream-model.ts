import type { FakeOpenAIServer } from '../../../runtime/test/helpers/fake-openai-server.js';

/** The environment variable the tests' catalogues read their upstream key from. */
export const UPSTREAM_KEY_ENV = 'SLUICE_TEST_UPSTREAM_KEY';

/**
 * A `[[model]]` table for a fake OpenAI-compatible upstream: the catalogue name `name`, the
 * upstream id `up-<name>`, the key from {@link UPSTREAM_KEY_ENV}; `more` adds settings (limits,
 * aliases, fallbacks).
 */
export function upstreamModel(
  name: string,
  upstream: FakeOpenAIServer,
  more: Record<string, unknown> = {},
): Record<string, unknown> & { name: string } {
  return {
    name,
    provider: 'openai',
    model: `up-${name}`,
    baseUrl: upstream.baseURL,
    apiKeyEnv: UPSTREAM_KEY_ENV,
    ...more,
  };
}
