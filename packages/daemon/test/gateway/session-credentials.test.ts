import { describe, expect, it } from 'vitest';
import { SessionCredentials, isSessionCredential } from '../../src/gateway/index.js';

describe('SessionCredentials', () => {
  it('names the session a live credential belongs to, and its running prompt', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issue('s1');
    expect(isSessionCredential(token)).toBe(true);
    expect(credentials.resolve(token)).toEqual({ sessionId: 's1', promptId: undefined, signal: undefined });
    const signal = new AbortController().signal;
    credentials.beginTurn('s1', 'p1', signal);
    expect(credentials.resolve(token)).toEqual({ sessionId: 's1', promptId: 'p1', signal });
    credentials.endTurn('s1', 'p0'); // a late end of an earlier turn changes nothing
    expect(credentials.resolve(token)?.promptId).toBe('p1');
    credentials.endTurn('s1', 'p1');
    expect(credentials.resolve(token)?.promptId).toBeUndefined();
  });

  it('refuses a credential once its session is revoked, and an unknown one', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issue('s1');
    credentials.revoke('s1');
    expect(credentials.resolve(token)).toBeUndefined();
    expect(credentials.resolve(`${token}x`)).toBeUndefined();
    expect(credentials.resolve('daemon-token')).toBeUndefined();
    expect(credentials.size).toBe(0);
  });

  it('re-issuing for a session retires the previous credential', () => {
    const credentials = new SessionCredentials();
    const first = credentials.issue('s1');
    const second = credentials.issue('s1');
    expect(first).not.toBe(second);
    expect(credentials.resolve(first)).toBeUndefined();
    expect(credentials.resolve(second)?.sessionId).toBe('s1');
  });

  it('refuses an empty session id, naming the value', () => {
    expect(() => new SessionCredentials().issue('')).toThrow(/sessionId must be a non-empty string, got ""/);
  });
});
