/**
 * Validation of what a `/v1` caller sends, shared by every route: the JSON body (size limit, depth
 * bound, superstruct schema, no U+0000 anywhere), UUID path parameters, and the structs bodies are
 * built from ({@link Text}, {@link sizedText}, paging {@link OffsetStruct} / {@link LimitStruct}).
 * Every failure is an {@link HttpError} with the status the caller's mistake deserves, never a 500.
 */
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { integer, max, min, refine, size, string, type Struct } from 'superstruct';
import { describeStructError, validateValue } from '../shared/validate.ts';
import { HttpError } from './http.ts';
import { findInJson, findTooDeep, MAX_BODY_DEPTH, type JsonPath } from './json-walk.ts';

/**
 * Reads the JSON body (at most `limitBytes`) and validates it against `schema`.
 * @throws {HttpError} 413 when too large, 400 when not JSON, nested deeper than
 *   {@link MAX_BODY_DEPTH} arrays and objects (naming the top-level member), or invalid (naming the field path).
 */
export async function readBody<T>(ctx: Context, schema: Struct<T, any>, limitBytes: number): Promise<T> {
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: limitBytes, encoding: 'utf8' });
  } catch (err) {
    const e = err as { type?: string; status?: number };
    if (e.type === 'entity.too.large' || e.status === 413) throw new HttpError(413, `request body exceeds ${limitBytes} bytes`);
    throw new HttpError(400, `could not read the request body: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = text.length === 0 ? {} : JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `malformed JSON body: ${(err as Error).message}`);
  }
  // Before validation: superstruct's messages and every later walk of the body would recurse.
  const deep = findTooDeep(value, MAX_BODY_DEPTH);
  if (deep) {
    const member = typeof deep[0] === 'string' ? deep[0] : '(root)';
    throw new HttpError(400, `invalid body: ${member}: nested deeper than ${MAX_BODY_DEPTH} levels of arrays and objects`);
  }
  const [error, result] = validateValue(value, schema, { coerce: true });
  if (error) throw new HttpError(400, `invalid body: ${describeStructError(error)}`);
  return result as T;
}

/**
 * Path of the first string (member name or value) holding U+0000 in a JSON value, or null. Walks
 * without recursion (admin/json-walk.ts), so no depth of value can exhaust the stack.
 */
export function findNul(value: unknown): JsonPath | null {
  return findInJson(value, (v) => typeof v === 'string' && v.includes('\u0000'));
}

/**
 * Path of the first number in a JSON value that is not finite, or null: JSON.parse reads a number
 * too large for a double (`1e400`) as ±Infinity, which JSON cannot write back (JSON.stringify makes
 * it `null`; postgres.js stores "Infinity" where a number was).
 */
export function findNonFinite(value: unknown): JsonPath | null {
  return findInJson(value, (v) => typeof v === 'number' && !Number.isFinite(v));
}

/**
 * {@link readBody} (size limit 413, malformed JSON 400, superstruct validation 400 naming the field),
 * plus a 400 naming the member when any string in the body holds U+0000, which neither text nor
 * jsonb columns accept, or any number is too large for a double ({@link findNonFinite}).
 */
export async function readSafeBody<T>(ctx: Context, schema: Struct<T, any>, limitBytes: number): Promise<T> {
  const body = await readBody(ctx, schema, limitBytes);
  const nul = findNul(body);
  if (nul) throw new HttpError(400, `invalid body: ${nul.join('.') || '(root)'}: must not contain the character U+0000`);
  const huge = findNonFinite(body);
  if (huge) throw new HttpError(400, `invalid body: ${huge.join('.') || '(root)'}: a number too large for a double (at most ±1.7976931348623157e308)`);
  return body;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Reads a path parameter that must be a UUID.
 * @returns the UUID in lower case.
 * @throws {HttpError} 404 when it is not a UUID (an id that cannot exist is an unknown id).
 */
export function uuidParam(ctx: Context, name: string, what = 'resource'): string {
  const value = (ctx.params as Record<string, string>)[name] ?? '';
  if (!UUID_RE.test(value)) throw new HttpError(404, `${what} ${JSON.stringify(value)} not found`);
  return value.toLowerCase();
}

/** True when `value` is a UUID string (either case). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_RE.test(value);
}

/** A string without U+0000 (PostgreSQL text cannot hold it). */
export const Text = refine(string(), 'text', (v) => (v.includes('\u0000') ? 'must not contain the character U+0000' : true));

/** A non-empty string of at most `max` characters without U+0000. */
export const sizedText = (max: number) => size(Text, 1, max);

/** Default `limit` of `POST /v1/request/query`, of the dataset sampler and of dataset rows. */
export const DEFAULT_LIMIT = 100;
/** Largest `limit` accepted by the filter-tree endpoints. */
export const MAX_LIMIT = 10_000;
/** Largest `offset` accepted by the filter-tree endpoints. */
export const MAX_OFFSET = 1_000_000_000;

/** `offset`: an integer in [0, {@link MAX_OFFSET}]. */
export const OffsetStruct = max(min(integer(), 0), MAX_OFFSET);
/** `limit`: an integer in [1, {@link MAX_LIMIT}]. */
export const LimitStruct = max(min(integer(), 1), MAX_LIMIT);
