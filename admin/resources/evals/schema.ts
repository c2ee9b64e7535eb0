/** Request bodies of the `/v1/evals` routes (superstruct). */
import { number, type } from 'superstruct';
import { sizedText } from '../../validation.ts';

/** Body of `POST /v1/evals/{requestId}`: a finite number and a name of 1–256 characters. */
export const EvalBody = type({ score: number(), name: sizedText(256) });
