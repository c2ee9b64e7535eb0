/**
 * Reading a client's request body (untrusted JSON) member by member while translating it: typed reads that answer a
 * 400 naming the member, a translation's table of what becomes of each top-level member ({@link readMembers}), and the
 * record of members a translation removes (see `TranslatorCall.removed`).
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
 * `value` as a positive integer, or a 400 naming `path`.
 * @throws {GatewayError} 400 `<path> must be a positive integer`.
 */
export function positiveIntegerAt(value: unknown, path: string): number {
  if (!Number.isInteger(value) || (value as number) < 1) throw badRequest(`${path} must be a positive integer`, path);
  return value as number;
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

/** What a translation writes while the top-level members are read; at least the paths of the members it removes. */
export interface MemberState {
  readonly removed: string[];
}

/** What becomes of one top-level member: checked, mapped onto the wire body, recorded as removed, or refused (it throws). */
export type MemberHandler<P extends MemberState = MemberState> = (value: unknown, p: P) => void;

/** A member honoured as it is, or mapped apart. */
export const nothing: MemberHandler = () => {};

/**
 * Refuses `member`: the client relies on what the provider cannot give.
 * @throws {GatewayError} 400 `unsupported_parameter` `<member>: <why>`.
 */
export function unsupported(member: string, why: string): never {
  throw badRequest(`${member}: ${why}`, member, 'unsupported_parameter');
}

/** The handler refusing `member` whatever its value (see {@link unsupported}). */
export function refuse(member: string, why: string): MemberHandler {
  return () => unsupported(member, why);
}

/** The handler recording `member` as removed (the provider has no place for it); an empty value carries nothing. */
export function record(member: string): MemberHandler {
  return (value, p) => {
    if (!isEmptyMember(value)) p.removed.push(member);
  };
}

/**
 * Runs every top-level member of `body` through its handler in `handlers`, in the body's order; a member without one
 * (a vendor extra, a member the API added later) is recorded as removed. A member set to null (or absent) is skipped,
 * and so is `skip` (one the caller read first); one set to `[]` or `{}` without a handler carries nothing and is not
 * recorded. `handlers` is a Map, so that a member named `constructor` or `toString` finds no `Object.prototype` member.
 */
export function readMembers<P extends MemberState>(body: Record<string, unknown>, handlers: ReadonlyMap<string, MemberHandler<P>>, p: P, skip?: string): void {
  for (const key in body) {
    const value = body[key];
    if (value === undefined || value === null || key === skip) continue;
    const handler = handlers.get(key);
    if (handler) handler(value, p);
    else if (!isEmptyMember(value)) p.removed.push(key);
  }
}
