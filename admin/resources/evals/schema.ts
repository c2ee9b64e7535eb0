/** Request bodies of the `/v1/evals` routes (superstruct). */
import { boolean, number, object, record, refine, type, union } from 'superstruct';
import { sizedText } from '../../validation.ts';

/** Most scores one `POST /v1/request/{requestId}/score` may set. */
export const MAX_SCORES_PER_CALL = 100;

/** Body of `POST /v1/evals/{requestId}`: a finite number and a name of 1–256 characters. */
export const EvalBody = type({ score: number(), name: sizedText(256) });

/**
 * Body of `POST /v1/request/{requestId}/score` (the reference's ScoreRequest): `scores`, 1 to
 * {@link MAX_SCORES_PER_CALL} names of 1–256 characters, each a finite number or a boolean (stored
 * as 1 or 0), no other members.
 */
export const ScoresBody = object({
  scores: refine(record(sizedText(256), union([number(), boolean()])), 'scores', (v) => {
    const n = Object.keys(v).length;
    return n >= 1 && n <= MAX_SCORES_PER_CALL ? true : `expected 1 to ${MAX_SCORES_PER_CALL} named scores, got ${n}`;
  }),
});
