/**
 * Reading the client's request headers: the parsed value (`req.headers`) for what the stages act
 * on, and the raw pairs (`req.rawHeaders`, names as sent, repeats kept apart) for what is logged;
 * the service key and a client's own provider credential (`Svc-Auth`); the session headers
 * (`Svc-Session-Id`, `-Path`, `-Name`) and their checks.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../../shared/apikey.ts';
import { GatewayError } from '../errors.ts';

/** The value of a header (`name` lower-case) as Node parsed it; the first of an array; null when absent. */
export function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
}

/**
 * A `Svc-User-Id` value as the gateway keys and logs it: null (no user) when the header is absent,
 * empty or only whitespace, so `Svc-User-Id: ""` is no user at all rather than one user shared by every
 * such caller (one per-user rate-limit bucket, one `user_id` in the log). Node already strips spaces
 * and tabs around a value; other whitespace (U+00A0 as obs-text) may remain and is checked too.
 * @param v the header's value as read, or null.
 */
export function userIdOf(v: string | null): string | null {
  if (v === null || v.length === 0) return null;
  // The usual id starts with a visible ASCII character: one comparison, no trim.
  const c = v.charCodeAt(0);
  if (c > 0x20 && c < 0x7f) return v;
  return v.trim() === '' ? null : v;
}

/** The first value of a header (`name` lower-case) as the client sent it, from `rawHeaders`; null when absent. */
export function clientHeader(req: IncomingMessage, name: string): string | null {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1]!;
  return null;
}

/**
 * The header names a `Connection` value nominates as hop-by-hop (RFC 9110 §7.6.1: a proxy removes
 * them before forwarding the message), lower-cased; null when it names none but `close` and
 * `keep-alive` (the usual values: no allocation then).
 */
export function connectionNominated(value: string): ReadonlySet<string> | null {
  const lower = value.toLowerCase();
  if (lower === 'keep-alive' || lower === 'close') return null;
  let names: Set<string> | null = null;
  for (const token of lower.split(',')) {
    const name = token.trim();
    if (name !== '' && name !== 'close' && name !== 'keep-alive') (names ??= new Set()).add(name);
  }
  return names;
}

/**
 * The client's raw headers (`rawHeaders` pairs) a transport may copy to the provider: all of them,
 * the same array, unless the client's `Connection` nominates some (RFC 9110 §7.6.1), which are left
 * out of a copy.
 */
export function forwardableHeaders(req: IncomingMessage): readonly string[] {
  const connection = req.headers.connection;
  const nominated = connection === undefined ? null : connectionNominated(connection);
  return nominated === null ? req.rawHeaders : withoutHeaderNames(req.rawHeaders, nominated);
}

/**
 * A copy of a flat header list (name, value, name, value …) less the headers whose name, in any
 * case, is in `names` (lower-case): the client's headers its `Connection` nominates
 * ({@link forwardableHeaders}), a provider's likewise and a decoded body's `content-encoding`
 * (../upstream/response.ts). Rare paths only: it allocates the copy.
 */
export function withoutHeaderNames(list: readonly string[], names: ReadonlySet<string>): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < list.length; i += 2) if (!names.has(list[i]!.toLowerCase())) kept.push(list[i]!, list[i + 1]!);
  return kept;
}

/** The request headers a log record carries, read in one pass by {@link logHeaders}. */
export interface LogHeaders {
  /** `Svc-Model-Override` as sent, or null. */
  modelOverride: string | null;
  /** `Svc-User-Id` as sent, or null when absent, empty or only whitespace ({@link userIdOf}). */
  userId: string | null;
  /**
   * The `Svc-Property-<Name>` headers as `{name: value}`: names lower-cased, repeated headers
   * joined with ", " (from `rawHeaders`, so repeats stay separate). The object has no prototype:
   * a property named "__proto__" or "constructor" is just a name.
   */
  properties: Record<string, string>;
  /**
   * The client's own session id: Claude Code's `x-claude-code-session-id`, else Codex's
   * `session_id`, else `session-id`; null when none is sent.
   */
  clientSessionId: string | null;
}

/**
 * The headers a log record carries ({@link LogHeaders}), from `rawHeaders` in one pass: each name is
 * lower-cased once, and only names starting with `s` or `x` (all of these do) at all.
 */
export function logHeaders(req: IncomingMessage): LogHeaders {
  const out: LogHeaders = { modelOverride: null, userId: null, properties: NO_PROPERTIES, clientSessionId: null };
  let claude: string | null = null;
  let underscore: string | null = null;
  let dash: string | null = null;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const first = raw[i]!.charCodeAt(0) | 0x20;
    if (first !== 0x73 && first !== 0x78) continue;
    const k = raw[i]!.toLowerCase();
    const v = raw[i + 1]!;
    if (k.startsWith('svc-property-')) {
      if (k.length === 'svc-property-'.length) continue;
      if (out.properties === NO_PROPERTIES) out.properties = Object.create(null) as Record<string, string>;
      const name = k.slice('svc-property-'.length);
      out.properties[name] = Object.hasOwn(out.properties, name) ? `${out.properties[name]}, ${v}` : v;
    } else if (k === 'svc-model-override') out.modelOverride ??= v;
    else if (k === 'svc-user-id') out.userId ??= v;
    else if (k === 'x-claude-code-session-id') claude ??= v;
    else if (k === 'session_id') underscore ??= v;
    else if (k === 'session-id') dash ??= v;
  }
  out.clientSessionId = claude ?? underscore ?? dash;
  out.userId = userIdOf(out.userId);
  return out;
}

/** The properties of a request that sends none: shared, and never written (a record only serializes it). */
const NO_PROPERTIES: Record<string, string> = Object.freeze(Object.create(null) as Record<string, string>);

/**
 * The provider credential a client brings (`Svc-Auth` carries its service key): its own
 * `Authorization` and `x-api-key` values, as sent, for the provider's transport to send instead of
 * the gateway's key.
 */
export interface ClientCredential {
  /** The client's `Authorization` header (e.g. `Bearer sk-ant-oat…`, a Claude subscription's OAuth token), or null. */
  authorization: string | null;
  /** The client's `x-api-key` header (an Anthropic API key as `ANTHROPIC_API_KEY` sends it), or null. */
  apiKey: string | null;
}

/**
 * The service key of a request: `Svc-Auth: Bearer <key>` when the header is there (the client's
 * own `Authorization`/`x-api-key` then belong to its provider), else `Authorization: Bearer <key>`,
 * else `x-api-key: <key>` (what `ANTHROPIC_API_KEY` sends). Null when the chosen header holds no key.
 */
export function serviceKey(req: IncomingMessage): string | null {
  const h = req.headers;
  const svcAuth = h['svc-auth'];
  if (svcAuth !== undefined) return bearerToken(typeof svcAuth === 'string' ? svcAuth : undefined);
  const bearer = bearerToken(h.authorization);
  if (bearer !== null) return bearer;
  const apiKey = h['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey.trim() : null;
}

/**
 * The client's own provider credential when it sent `Svc-Auth` (bring your own key), else null:
 * the gateway's provider key is used. Without a service key (`svc.features: none`) the header's
 * presence alone asks for the client's credential to be used.
 * @throws {GatewayError} 401 `missing_provider_credential` when `Svc-Auth` is sent without an
 *   `Authorization` or `x-api-key` to forward.
 */
export function clientCredential(req: IncomingMessage): ClientCredential | null {
  const h = req.headers;
  if (h['svc-auth'] === undefined) return null;
  const authorization = h.authorization ?? null;
  const apiKey = header(req, 'x-api-key');
  if (!authorization && !apiKey) {
    throw new GatewayError(401, 'Svc-Auth carries the service key, so the provider credential must come in "x-api-key" or "Authorization"; neither was sent', 'invalid_request_error', 'missing_provider_credential');
  }
  return { authorization: authorization || null, apiKey: apiKey || null };
}

/** Longest `Svc-Session-Id` and `Svc-Session-Name` values accepted (characters). */
export const MAX_SESSION_ID = 256;
/** Longest `Svc-Session-Path` value accepted (characters). */
export const MAX_SESSION_PATH = 1024;

/** A request's session headers as sent (each null when absent). */
export interface SessionHeaders {
  /** `Svc-Session-Id`: groups requests into a session (an agent run, a conversation). */
  id: string | null;
  /** `Svc-Session-Path`: the request's place in the session, a `/`-separated trace path (`/plan/search`). */
  path: string | null;
  /** `Svc-Session-Name`: the session's name. */
  name: string | null;
}

/**
 * The first value of a session header as the client sent it, its bytes read as UTF-8 when they
 * are valid UTF-8 (Node hands header values over as latin1), else as sent; null when absent.
 */
function sessionHeader(req: IncomingMessage, name: string): string | null {
  if (req.headers[name] === undefined) return null;
  const v = clientHeader(req, name);
  if (v === null || !/[^\x00-\x7f]/.test(v)) return v;
  const bytes = Buffer.from(v, 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : v;
}

/**
 * Reads `Svc-Session-Id`, `Svc-Session-Path` and `Svc-Session-Name` (three header lookups when
 * none is sent). Values are as sent, trimmed; see {@link checkSessionHeaders} for what is refused.
 * @returns null when none of the three is present.
 */
export function sessionHeaders(req: IncomingMessage): SessionHeaders | null {
  const h = req.headers;
  if (h['svc-session-id'] === undefined && h['svc-session-path'] === undefined && h['svc-session-name'] === undefined) return null;
  return { id: sessionHeader(req, 'svc-session-id')?.trim() ?? null, path: sessionHeader(req, 'svc-session-path')?.trim() ?? null, name: sessionHeader(req, 'svc-session-name')?.trim() ?? null };
}

/**
 * Checks the session headers a request sent (validate stage): `Svc-Session-Id` and
 * `Svc-Session-Name` 1–{@link MAX_SESSION_ID} characters, `Svc-Session-Path` starting with `/` and
 * at most {@link MAX_SESSION_PATH} characters. No work beyond three header lookups when none is sent.
 * @throws {GatewayError} 400 `invalid_header` naming the header (rendered in the endpoint kind's error shape).
 */
export function checkSessionHeaders(req: IncomingMessage): void {
  const s = sessionHeaders(req);
  if (s === null) return;
  const bad = (header: string, message: string) => new GatewayError(400, `${header} ${message}`, 'invalid_request_error', 'invalid_header', header);
  if (s.id !== null) {
    if (s.id.length === 0) throw bad('Svc-Session-Id', 'must not be empty');
    if (s.id.length > MAX_SESSION_ID) throw bad('Svc-Session-Id', `must be at most ${MAX_SESSION_ID} characters (got ${s.id.length})`);
  }
  if (s.name !== null) {
    if (s.name.length === 0) throw bad('Svc-Session-Name', 'must not be empty');
    if (s.name.length > MAX_SESSION_ID) throw bad('Svc-Session-Name', `must be at most ${MAX_SESSION_ID} characters (got ${s.name.length})`);
  }
  if (s.path !== null) {
    if (!s.path.startsWith('/')) throw bad('Svc-Session-Path', 'must start with "/" (a trace path such as /plan/search)');
    if (s.path.length > MAX_SESSION_PATH) throw bad('Svc-Session-Path', `must be at most ${MAX_SESSION_PATH} characters (got ${s.path.length})`);
  }
}
