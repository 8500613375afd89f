import { describe, expect, it } from 'vitest';
import { DaemonConfigError, resolveDaemonConfig } from '../../src/config.js';

function refusal(config: Record<string, unknown>): DaemonConfigError {
  try {
    resolveDaemonConfig(config);
  } catch (error) {
    if (error instanceof DaemonConfigError) return error;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(config)}`);
}

describe('daemon configuration', () => {
  it('fills in the documented defaults and resolves the workspace', () => {
    const config = resolveDaemonConfig({ workspace: '/srv/project/../project' });
    expect(config).toMatchObject({
      workspace: '/srv/project',
      dataDir: '.sluice',
      provider: 'echo',
      echoDelayMs: 0,
      maxPendingPromptsPerSession: 5,
      eventRingSize: 8000,
      terminalEventDelayMs: 10,
      drainTimeoutMs: 10_000,
    });
    expect(config.promptDeadlineMs).toBeUndefined();
  });

  it('BP-1/BP-2 a negative, fractional or NaN prompt limit is refused naming the setting and the value', () => {
    for (const value of [-1, 2.5, Number.NaN, '5']) {
      const error = refusal({ maxPendingPromptsPerSession: value });
      expect(error.setting).toBe('maxPendingPromptsPerSession');
      expect(error.message).toContain('maxPendingPromptsPerSession');
      expect(error.message).toContain(typeof value === 'string' ? '"5"' : String(value));
    }
    expect(resolveDaemonConfig({ maxPendingPromptsPerSession: 0 }).maxPendingPromptsPerSession).toBe(0);
  });

  it('refuses out-of-range timers, unknown settings, bad providers and non-http base URLs', () => {
    expect(refusal({ promptDeadlineMs: 0 }).message).toMatch(/promptDeadlineMs: must be positive \(got 0\)/);
    expect(refusal({ modelTimeoutMs: 2 ** 31 }).message).toMatch(/must be at most 2147483647/);
    expect(refusal({ maxPendingPrompts: 3 }).message).toMatch(/maxPendingPrompts: unknown setting/);
    expect(refusal({ provider: 'claude' }).message).toMatch(
      /must be one of "echo", "openai", "anthropic" \(got "claude"\)/,
    );
    expect(refusal({ provider: 'openai', model: 'm', baseURL: 'ftp://x/v1' }).setting).toBe('baseURL');
    expect(refusal({ provider: 'openai', model: 'm', baseURL: 'not a url' }).setting).toBe('baseURL');
    expect(refusal({ provider: 'anthropic' }).setting).toBe('model');
    expect(refusal({ provider: 'anthropic', model: 'm', anthropicMaxTokens: 0 }).setting).toBe(
      'anthropicMaxTokens',
    );
    expect(refusal({ dataDir: '' }).message).toMatch(/dataDir: must not be empty/);
  });

  it('checks settings that depend on each other', () => {
    expect(refusal({ provider: 'openai' }).setting).toBe('model');
    expect(refusal({ workspace: 'relative/dir' }).setting).toBe('workspace');
    expect(refusal({ modelMaxConcurrency: 8, modelMaxInflight: 4 }).setting).toBe('modelMaxInflight');
    expect(resolveDaemonConfig({ modelMaxConcurrency: 100 }).modelMaxConcurrency).toBe(100);
  });
});
