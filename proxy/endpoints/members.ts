/**
 * Checks shared by the OpenAI endpoint kinds' body validation: `model`, the numeric and boolean
 * sampling members, `user`. Each failure is a 400 whose `param` names the member.
 */
import { badRequest, type GatewayError } from '../errors.ts';
import type { Json } from './types.ts';

/** Members that, when present and not null, must be finite numbers. */
export const NUMBER_MEMBERS = ['max_tokens', 'max_completion_tokens', 'n', 'temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed', 'top_logprobs', 'dimensions'] as const;
/** Members that, when present and not null, must be booleans. */
export const BOOLEAN_MEMBERS = ['stream', 'logprobs', 'parallel_tool_calls', 'store'] as const;

/** A JSON object (not null, not an array). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Absent or null: an optional member the client left out. */
export function absent(v: unknown): boolean {
  return v === undefined || v === null;
}

/** 400 `invalid_type`: `"<member>" must be <what>`. */
export function wrongType(member: string, what: string): GatewayError {
  return badRequest(`"${member}" must be ${what}`, member, 'invalid_type');
}

/**
 * The checks every OpenAI-dialect body gets: a non-empty string `model`, finite numbers in
 * {@link NUMBER_MEMBERS}, booleans in {@link BOOLEAN_MEMBERS}, a string `user`.
 * @throws {GatewayError} 400 `missing_model` or `invalid_type` naming the member.
 */
export function validateOpenAICommon(b: Json): void {
  if (typeof b.model !== 'string' || b.model.length === 0) throw badRequest('missing required member "model" (a string such as "openai/gpt-4o-mini")', 'model', 'missing_model');
  for (const k of NUMBER_MEMBERS) {
    const v = b[k];
    if (!absent(v) && (typeof v !== 'number' || !Number.isFinite(v))) throw wrongType(k, 'a number');
  }
  for (const k of BOOLEAN_MEMBERS) if (!absent(b[k]) && typeof b[k] !== 'boolean') throw wrongType(k, 'a boolean');
  if (!absent(b.user) && typeof b.user !== 'string') throw wrongType('user', 'a string');
}
