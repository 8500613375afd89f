import { afterAll, beforeAll, expect, test } from 'vitest';
import { runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// README: "Run `sluice.js serve --help` for every flag". A user reading it must learn what an
// unset limit is: the help's "(default: …)" of each limit is the value the daemon reports in
// /capabilities when the flag is not given.
let daemon: SluiceProcess;
let help: string;
beforeAll(async () => {
  daemon = await startSluice();
  help = (await runSluice(['serve', '--help'])).stdout.replace(/\s+/g, ' ');
});
afterAll(async () => {
  await daemon?.stop();
});

test('serve --help names the default of every limit the daemon reports', async () => {
  const response = await fetch(`${daemon.url}/capabilities`);
  const { limits } = (await response.json()) as {
    limits: {
      maxSessions: number;
      maxSessionsPerWorkspace: number;
      model: Record<string, number>;
    };
  };
  const expected: Array<[string, number]> = [
    ['--max-sessions <n>', limits.maxSessions],
    ['--max-sessions-per-workspace <n>', limits.maxSessionsPerWorkspace],
    ['--model-max-concurrency <n>', limits.model['maxConcurrency']!],
    ['--model-max-queued <n>', limits.model['maxQueued']!],
    ['--model-max-inflight <n>', limits.model['maxInflight']!],
    ['--model-max-request-bytes <n>', limits.model['maxRequestBytes']!],
    ['--model-timeout-ms <ms>', limits.model['defaultTimeoutMs']!],
  ];
  for (const [flag, value] of expected) {
    const line = help.slice(help.indexOf(flag), help.indexOf(' --', help.indexOf(flag) + flag.length));
    expect(line, flag).toContain(`(default: ${value}`);
  }
  for (const flag of [
    '--event-ring-size <n>',
    '--drain-timeout-ms <ms>',
    '--echo-delay-ms <ms>',
    '--base-url <url>',
  ])
    expect(help.slice(help.indexOf(flag)).split(' --')[0], flag).toMatch(/default/);
});
