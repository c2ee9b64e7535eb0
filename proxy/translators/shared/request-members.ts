/**
 * Reading a client's request body (untrusted JSON) member by member while translating it: typed reads that answer a
 * 400 naming the member, and the record of members a translation removes (see `TranslatorCall.removed`).
 */
import { badRequest } from '../../errors.ts';
import { isRecord } from './values.ts';

/**
 * `value` as an object, or a 400 naming `path`.
 * @throws {GatewayError} 400 `<path> must be an object`.
 */
export function objectAt(value: unknown, path: string): Record<string, unknown> {
  if (!isRecord(value)) throw badRequest(`${path} must be an object`, path);
  return value;
}

/**
 * `value` as a string, or a 400 naming `path`.
 * @throws {GatewayError} 400 `<path> must be a string`.
 */
export function stringAt(value: unknown, path: string): string {
  if (typeof value !== 'string') throw badRequest(`${path} must be a string`, path);
  return value;
}

/**
 * `value` as a finite number, or a 400 naming `path`.
 * @throws {GatewayError} 400 `<path> must be a number`.
 */
export function numberAt(value: unknown, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${path} must be a number`, path);
  return value;
}

/**
 * `value` as a boolean, or a 400 naming `path`.
 * @throws {GatewayError} 400 `<path> must be a boolean`.
 */
export function booleanAt(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw badRequest(`${path} must be a boolean`, path);
  return value;
}

/** True when `value` carries nothing: undefined, null, an empty array or an empty object. */
export function isEmptyMember(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isRecord(value) && Object.keys(value).length === 0;
}

/** True when `value` carries something by the default rule of {@link recordUnmapped}: not {@link isEmptyMember}. */
export function carriesContent(value: unknown): boolean {
  return !isEmptyMember(value);
}

/** True when `value` is neither undefined nor null (an empty array or object counts as present). */
export function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

/**
 * Pushes `<path>.<member>` to `removed` for every member of `value` that is not in `mapped` and for which `carries`
 * holds: what an object holds beyond what the translation maps is reported, never dropped silently. By default
 * ({@link carriesContent}) an empty `annotations: []` a client echoes back is not noise in the record (the Responses
 * translator); the Messages translator passes {@link isPresent}, so that only null members go unreported there.
 */
export function recordUnmapped(
  value: Record<string, unknown>,
  mapped: ReadonlySet<string>,
  path: string,
  removed: string[],
  carries: (value: unknown) => boolean = carriesContent,
): void {
  for (const key in value) if (!mapped.has(key) && carries(value[key])) removed.push(`${path}.${key}`);
}
