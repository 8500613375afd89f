import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Tests that run the build output — the bundled daemon as a child process, or a compiled
 * dist/ module — are named *.e2e.test.ts; everything else tests the sources. `vitest run`
 * runs both projects, `vitest run --project unit` the sources' tests alone.
 */
const E2E_TESTS = 'packages/*/test/**/*.e2e.test.ts';

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'] } },
  test: {
    // Vitest's default is one worker less than the cores: one on a 2-core CI machine, where most
    // of the suite waits on child processes (daemons, agents, Chromium) rather than computing.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll's default second is a flake on a loaded 2-core machine (a daemon's first call
    // took longer in CI); a condition that holds still passes at once, one that never does fails.
    expect: { poll: { timeout: 10_000 } },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/**/*.test.ts', 'scripts/**/*.test.ts'],
          exclude: [...configDefaults.exclude, E2E_TESTS],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: [E2E_TESTS],
          // Refuses to start on a missing bundle or one older than the sources.
          globalSetup: ['scripts/bundle-freshness.ts'],
        },
      },
    ],
  },
});
