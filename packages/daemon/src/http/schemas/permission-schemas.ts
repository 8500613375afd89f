import { describeValue } from '@sluice/protocol';
import * as z from 'zod/mini';
import { InvalidPermissionOutcomeError, MAX_PERMISSION_OPTION_ID_CHARS } from '../../permissions/index.js';
import { documented } from './common-schemas.js';
import type { FieldExplainer } from './request-body.js';

/** A vote's `outcome`: an offered option, or cancelled (PROTOCOL §7). */
const Outcome = z.discriminatedUnion('outcome', [
  z.looseObject({
    outcome: z.literal('selected'),
    optionId: documented(
      z.string().check(z.minLength(1), z.maxLength(MAX_PERMISSION_OPTION_ID_CHARS)),
      'One of the `optionId`s the `permission_request` offered.',
    ),
  }),
  z.looseObject({ outcome: z.literal('cancelled') }),
]);

/** `POST /session/:id/permission/:requestId` and `POST /permission/:requestId`. */
export const VoteBody = z.looseObject({ outcome: Outcome });

/** Errors of a vote: `invalid_permission_outcome`, saying which part is wrong. */
export const explainVote: FieldExplainer = (issue, body) => {
  const outcome = body['outcome'];
  switch (issue.path[1]) {
    case undefined:
      return new InvalidPermissionOutcomeError(`got ${describeValue(outcome)}`);
    case 'outcome':
      return new InvalidPermissionOutcomeError(
        `outcome.outcome is ${describeValue((outcome as Record<string, unknown>)['outcome'])}`,
      );
    default:
      return new InvalidPermissionOutcomeError(
        `optionId must be a string of 1..${MAX_PERMISSION_OPTION_ID_CHARS} characters`,
      );
  }
};

/** `:requestId` of a vote (and `:id`, the session, on the session route). */
export const VoteParams = z.object({
  requestId: documented(z.string(), 'The `requestId` of the `permission_request` event.'),
});
