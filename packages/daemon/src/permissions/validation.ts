import { describeValue } from '@sluice/protocol';
import type {
  PermissionOption,
  PermissionOptionKind,
  PermissionOutcome,
  PermissionRequest,
} from '../sessions/index.js';
import { InvalidPermissionOutcomeError, InvalidPermissionRequestError } from './errors.js';

const KINDS: ReadonlySet<string> = new Set<PermissionOptionKind>([
  'allow_once',
  'allow_always',
  'reject_once',
  'reject_always',
]);
/** Options one request may offer. */
export const MAX_PERMISSION_OPTIONS = 16;
/** Longest `optionId` a permission option, and a vote, may carry. */
export const MAX_PERMISSION_OPTION_ID_CHARS = 128;
const MAX_ID_CHARS = MAX_PERMISSION_OPTION_ID_CHARS;
const MAX_NAME_CHARS = 256;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads a vote's `outcome` (the value under the body's `outcome` key), or throws `invalid_permission_outcome`. */
export function parsePermissionOutcome(raw: unknown): PermissionOutcome {
  if (!isRecord(raw)) throw new InvalidPermissionOutcomeError(`got ${describeValue(raw)}`);
  const kind = raw['outcome'];
  if (kind === 'cancelled') return { outcome: 'cancelled' };
  if (kind !== 'selected')
    throw new InvalidPermissionOutcomeError(`outcome.outcome is ${describeValue(kind)}`);
  const optionId = raw['optionId'];
  if (typeof optionId !== 'string' || optionId.length === 0 || optionId.length > MAX_ID_CHARS)
    throw new InvalidPermissionOutcomeError(`optionId must be a string of 1..${MAX_ID_CHARS} characters`);
  return { outcome: 'selected', optionId };
}

/** Checks what an agent asks with; returns a copy of the options (the agent may reuse its array). */
export function validatePermissionRequest(request: PermissionRequest): PermissionOption[] {
  if (!isRecord(request)) throw new InvalidPermissionRequestError('expected an object');
  if (!isRecord(request.toolCall)) throw new InvalidPermissionRequestError('toolCall must be an object');
  const { options } = request;
  if (!Array.isArray(options) || options.length === 0 || options.length > MAX_PERMISSION_OPTIONS)
    throw new InvalidPermissionRequestError(
      `options must be an array of 1..${MAX_PERMISSION_OPTIONS} options`,
    );
  const seen = new Set<string>();
  return options.map((option: unknown, index) => {
    if (!isRecord(option)) throw new InvalidPermissionRequestError(`option ${index} is not an object`);
    const { optionId, name, kind } = option;
    if (typeof optionId !== 'string' || optionId.length === 0 || optionId.length > MAX_ID_CHARS)
      throw new InvalidPermissionRequestError(
        `option ${index}: optionId must be 1..${MAX_ID_CHARS} characters`,
      );
    if (seen.has(optionId))
      throw new InvalidPermissionRequestError(
        `option ${index}: duplicate optionId ${describeValue(optionId)}`,
      );
    seen.add(optionId);
    if (typeof name !== 'string' || name.length > MAX_NAME_CHARS)
      throw new InvalidPermissionRequestError(
        `option ${index}: name must be a string of at most ${MAX_NAME_CHARS}`,
      );
    if (typeof kind !== 'string' || !KINDS.has(kind))
      throw new InvalidPermissionRequestError(`option ${index}: unknown kind ${describeValue(kind)}`);
    return { optionId, name, kind: kind as PermissionOptionKind };
  });
}

/**
 * The option a timeout picks: `reject_once`, else any `reject_*`; `undefined` when none is
 * offered. Never `cancelled`, which agents read as "abort the turn" (PROTOCOL §7).
 */
export function timeoutChoice(options: readonly PermissionOption[]): PermissionOption | undefined {
  return (
    options.find((option) => option.kind === 'reject_once') ??
    options.find((option) => option.kind.startsWith('reject_'))
  );
}
