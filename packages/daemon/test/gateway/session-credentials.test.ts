import { describe, expect, it } from 'vitest';
import { SessionCredentials, isSessionCredential } from '../../src/gateway/index.js';

describe('SessionCredentials', () => {
  it('names the session a live credential belongs to, and its running prompt', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issue('s1');
    expect(isSessionCredential(token)).toBe(true);
    expect(credentials.resolve(token)).toEqual({
      sessionId: 's1',
      promptId: undefined,
      signal: undefined,
      budgets: new Set(),
    });
    const signal = new AbortController().signal;
    credentials.beginTurn('s1', 'p1', signal);
    expect(credentials.resolve(token)).toEqual({
      sessionId: 's1',
      promptId: 'p1',
      signal,
      budgets: new Set(),
    });
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

// Issue 27 item 4: a shared agent process calls with one credential and names each call's session.
describe('SessionCredentials of a shared agent process', () => {
  it('attributes a call to the session its agent-session header names, with that session’s prompt and budget', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issueShared('agent-process-1');
    credentials.bindAgentSession('agent-process-1', 'agent-a', 's1');
    credentials.bindAgentSession('agent-process-1', 'agent-b', 's2');
    const signal = new AbortController().signal;
    credentials.beginTurn('s2', 'p2', signal, 'budget-x');
    expect(credentials.resolve(token, 'agent-b')).toEqual({
      sessionId: 's2',
      promptId: 'p2',
      signal,
      budgetId: 'budget-x',
      budgets: new Set(['budget-x']),
    });
    expect(credentials.resolve(token, 'agent-a')).toMatchObject({ sessionId: 's1', promptId: undefined });
    // without the header two sessions are ambiguous: the call is the process's own
    expect(credentials.resolve(token)?.sessionId).toBe('agent-process-1');
  });

  it('refuses a header naming no session of that process, or a session that left it', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issueShared('agent-process-1');
    const other = credentials.issueShared('agent-process-2');
    credentials.bindAgentSession('agent-process-1', 'agent-a', 's1');
    credentials.bindAgentSession('agent-process-2', 'agent-b', 's2');
    expect(credentials.resolve(token, 'agent-b')).toBeUndefined();
    expect(credentials.resolve(other, 'agent-b')?.sessionId).toBe('s2');
    credentials.unbindAgentSession('agent-process-1', 'agent-a');
    expect(credentials.resolve(token, 'agent-a')).toBeUndefined();
    credentials.revoke('agent-process-2');
    expect(credentials.resolve(other, 'agent-b')).toBeUndefined();
  });

  it('a process hosting one session attributes a call without the header to it', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issueShared('agent-process-1');
    credentials.bindAgentSession('agent-process-1', 'agent-a', 's1');
    expect(credentials.resolve(token)?.sessionId).toBe('s1');
  });
});

describe('budgets attached to a session (issue 28 item 2)', () => {
  it('collects the budgets its turns ran with, keeps them after the turn, drops them with the credential', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issue('s1');
    const signal = new AbortController().signal;
    credentials.beginTurn('s1', 'p1', signal, 'b1');
    credentials.endTurn('s1', 'p1');
    credentials.beginTurn('s1', 'p2', signal);
    credentials.beginTurn('s1', 'p3', signal, 'b2');
    credentials.endTurn('s1', 'p3');
    expect(credentials.resolve(token)?.budgets).toEqual(new Set(['b1', 'b2']));
    credentials.revoke('s1');
    expect(credentials.resolve(credentials.issue('s1'))?.budgets).toEqual(new Set());
  });

  it('a session that leaves a shared process takes its budgets along', () => {
    const credentials = new SessionCredentials();
    const token = credentials.issueShared('proc');
    credentials.bindAgentSession('proc', 'agent-a', 's1');
    credentials.beginTurn('s1', 'p1', new AbortController().signal, 'b1');
    expect(credentials.resolve(token, 'agent-a')?.budgets).toEqual(new Set(['b1']));
    credentials.unbindAgentSession('proc', 'agent-a');
    credentials.bindAgentSession('proc', 'agent-a', 's1');
    expect(credentials.resolve(token, 'agent-a')?.budgets).toEqual(new Set());
  });
});
