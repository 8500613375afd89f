import { describe, expect, test } from 'vitest';
import { DaemonClient, DaemonSessionClient } from '../src/index.js';
import { normalizePendingPromptLimit } from '../src/validate.js';

describe('BP-13 maxPendingPromptsPerSession takes the capability value directly', () => {
  test('BP-13 default 5; null, 0 and Infinity disable the local limit', () => {
    expect(normalizePendingPromptLimit(undefined)).toBe(5);
    expect(normalizePendingPromptLimit(null)).toBe(Infinity);
    expect(normalizePendingPromptLimit(0)).toBe(Infinity);
    expect(normalizePendingPromptLimit(Infinity)).toBe(Infinity);
    expect(normalizePendingPromptLimit(7)).toBe(7);
    expect(new DaemonClient({ baseUrl: 'http://127.0.0.1:1' }).maxPendingPromptsPerSession).toBe(5);
    expect(
      new DaemonClient({ baseUrl: 'http://127.0.0.1:1', maxPendingPromptsPerSession: null })
        .maxPendingPromptsPerSession,
    ).toBe(Infinity);
  });

  test.each([-1, 1.5, NaN, -Infinity])('BP-13 %s is a TypeError naming the value', (value) => {
    expect(
      () => new DaemonClient({ baseUrl: 'http://127.0.0.1:1', maxPendingPromptsPerSession: value }),
    ).toThrow(
      new TypeError(
        `maxPendingPromptsPerSession must be a non-negative integer, Infinity or null, got ${String(value)}`,
      ),
    );
  });

  test('BP-14 a session client may override the parent limit, and validates it the same way', () => {
    const client = new DaemonClient({ baseUrl: 'http://127.0.0.1:1', maxPendingPromptsPerSession: 5 });
    const session = { sessionId: 's', workspaceCwd: '/w', attached: false };
    expect(new DaemonSessionClient({ client, session }).maxPendingPromptsPerSession).toBe(5);
    expect(
      new DaemonSessionClient({ client, session, maxPendingPromptsPerSession: 2 })
        .maxPendingPromptsPerSession,
    ).toBe(2);
    expect(
      new DaemonSessionClient({ client, session, maxPendingPromptsPerSession: null })
        .maxPendingPromptsPerSession,
    ).toBe(Infinity);
    expect(() => new DaemonSessionClient({ client, session, maxPendingPromptsPerSession: 2.5 })).toThrow(
      /got 2\.5/,
    );
    expect(() => new DaemonSessionClient({ client, session, lastEventId: -3 })).toThrow(
      /lastEventId must be a non-negative integer, got -3/,
    );
  });
});

describe('DaemonClient options are validated where they enter', () => {
  test('baseUrl, token, fetch, fetchTimeoutMs and reconnect name the bad value', () => {
    expect(() => new DaemonClient({ baseUrl: 'localhost:4170' })).toThrow(
      /baseUrl must be an absolute http\(s\) URL, got "localhost:4170"/,
    );
    expect(() => new DaemonClient({ baseUrl: 'ftp://x' })).toThrow(/got "ftp:\/\/x"/);
    expect(() => new DaemonClient({ baseUrl: 'http://x', token: '' })).toThrow(
      /token must be a non-empty string/,
    );
    expect(() => new DaemonClient({ baseUrl: 'http://x', fetchTimeoutMs: -5 })).toThrow(
      /fetchTimeoutMs .* got -5/,
    );
    expect(() => new DaemonClient({ baseUrl: 'http://x', reconnect: { maxAttempts: 1.5 } })).toThrow(
      /reconnect\.maxAttempts .* got 1\.5/,
    );
    expect(new DaemonClient({ baseUrl: 'http://x:1///' }).baseUrl).toBe('http://x:1');
  });
});
