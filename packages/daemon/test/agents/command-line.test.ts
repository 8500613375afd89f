import { describe, expect, test } from 'vitest';
import { parseAgentSpec, splitCommandLine } from '../../src/agents/index.js';
import { DaemonConfigError, resolveDaemonConfig } from '../../src/config.js';

// `--agent "<command> [args…]"` is split into argv without a shell (issue 18 §1).

describe('--agent command lines', () => {
  test('are split on whitespace, with quotes and backslashes as a POSIX shell reads them', () => {
    expect(splitCommandLine('qwen --acp')).toEqual(['qwen', '--acp']);
    expect(splitCommandLine(`  node "/opt/my agent/cli.js"   --flag='a b' \\$HOME ""`)).toEqual([
      'node',
      '/opt/my agent/cli.js',
      '--flag=a b',
      '$HOME',
      '',
    ]);
    expect(splitCommandLine(`say "a \\"quoted\\" word" 'it''s'`)).toEqual(['say', 'a "quoted" word', 'its']);
  });

  test('with an unterminated quote or a trailing backslash are refused', () => {
    expect(() => splitCommandLine('qwen "--acp')).toThrow(/unterminated " quote/);
    expect(() => splitCommandLine('qwen \\')).toThrow(/lone backslash/);
  });

  test('are named after the executable unless named explicitly', () => {
    expect(parseAgentSpec('/usr/local/bin/qwen --acp')).toEqual({
      name: 'qwen',
      command: ['/usr/local/bin/qwen', '--acp'],
    });
    expect(parseAgentSpec('gem="gemini --experimental-acp"')).toEqual({
      name: 'gem',
      command: ['gemini', '--experimental-acp'],
    });
    expect(() => parseAgentSpec('   ')).toThrow(/empty/);
  });

  test('a config with two agents of one name, or an empty command, is refused naming the setting', () => {
    const twice = () =>
      resolveDaemonConfig({
        agents: [
          { name: 'a', command: ['x'] },
          { name: 'a', command: ['y'] },
        ],
      });
    expect(twice).toThrow(DaemonConfigError);
    expect(twice).toThrow(/agents: agent name "a" is given twice/);
    expect(() => resolveDaemonConfig({ agents: [{ name: 'a', command: [] }] })).toThrow(
      /agents: agent "a" needs a command/,
    );
    expect(() => resolveDaemonConfig({ agentMaxProcesses: 0 })).toThrow(
      /agentMaxProcesses: must be positive/,
    );
  });
});
