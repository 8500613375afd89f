import type { SessionUpdate } from '../../sessions/index.js';

/**
 * qwen-code's `available_commands_update` carries, in `_meta.availableSkillDetails`, the whole
 * text of every skill the agent knows: about 1.5 MB, sent to every session. `qwen serve` leaves
 * it out of every event its clients see (they get the commands and the skill names in
 * `_meta.availableSkills`); Sluice drops it where the agent's update comes in, so that no held
 * update, replay ring, stream or ACP client carries it (docs/protocol.md §6,
 * docs/decisions/044-skill-texts-stay-with-the-agent.md).
 *
 * Changes `update` in place (the relay's own parse of the agent's line) and returns whether it
 * removed anything. An `_meta` left empty is removed too.
 */
export function dropSkillDetails(update: SessionUpdate): boolean {
  if (update.sessionUpdate !== 'available_commands_update') return false;
  const record = update as Record<string, unknown>;
  const meta = record['_meta'];
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return false;
  if (!Object.hasOwn(meta, 'availableSkillDetails')) return false;
  const rest = meta as Record<string, unknown>;
  delete rest['availableSkillDetails'];
  if (Object.keys(rest).length === 0) delete record['_meta'];
  return true;
}
