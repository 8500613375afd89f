import { describe, expect, test } from 'vitest';
import { dropSkillDetails } from '../../src/agents/acp/skill-details.js';
import type { SessionUpdate } from '../../src/sessions/index.js';

// qwen's skill texts stay with the agent (docs/decisions/044); everything else of an update is kept.

const commands = (meta: unknown): SessionUpdate => ({
  sessionUpdate: 'available_commands_update',
  availableCommands: [{ name: 'review', description: 'Review the change' }],
  _meta: meta,
});

describe('the skills’ text is dropped from a commands update', () => {
  test('the text goes; the commands, the skill names and other metadata stay', () => {
    const update = commands({
      availableSkills: ['review'],
      availableSkillDetails: [{ name: 'review', body: '# Review\n…' }],
      qwenVersion: '0.24.4',
    });
    expect(dropSkillDetails(update)).toBe(true);
    expect(update).toEqual({
      sessionUpdate: 'available_commands_update',
      availableCommands: [{ name: 'review', description: 'Review the change' }],
      _meta: { availableSkills: ['review'], qwenVersion: '0.24.4' },
    });
  });

  test('an `_meta` that held only the text is removed', () => {
    const update = commands({ availableSkillDetails: [] });
    expect(dropSkillDetails(update)).toBe(true);
    expect(update).not.toHaveProperty('_meta');
  });

  test('updates without skill texts are left as they are', () => {
    const cases: SessionUpdate[] = [
      commands({ availableSkills: ['review'] }),
      commands(undefined),
      commands(['availableSkillDetails']),
      commands('availableSkillDetails'),
      { sessionUpdate: 'agent_message_chunk', _meta: { availableSkillDetails: [{ body: 'x' }] } },
    ];
    for (const update of cases) {
      const before = structuredClone(update);
      expect(dropSkillDetails(update)).toBe(false);
      expect(update).toEqual(before);
    }
  });
});
