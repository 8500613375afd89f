import { expect } from 'vitest';

/** What the daemon wrote on stderr, one parsed JSON object per line; throws if a line is not JSON. */
export function logLines(stderr: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Waits until a log line `matches` (lines come through the lazily loaded logger), and returns it. */
export async function waitForLogLine(
  stderr: () => string,
  matches: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  await expect.poll(() => logLines(stderr()).some(matches), { timeout: 10_000 }).toBe(true);
  return logLines(stderr()).find(matches)!;
}

/** The bearer token the daemon generated and logged for the operator. */
export async function generatedToken(stderr: () => string): Promise<string> {
  const line = await waitForLogLine(stderr, (l) => typeof l['token'] === 'string');
  return line['token'] as string;
}
