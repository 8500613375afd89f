import { vi } from 'vitest';

/**
 * Resolves once `check()` holds, polling it (vitest's `vi.waitFor`); rejects naming `what` when
 * it still does not after `timeoutMs`, so a test fails instead of hanging. Under fake timers
 * `vi.waitFor` advances them by its interval between checks.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what = 'the condition',
  timeoutMs = 10_000,
): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
    },
    { timeout: timeoutMs, interval: 2 },
  );
}
