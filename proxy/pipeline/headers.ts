/**
 * Reading the client's request headers: the parsed value (`req.headers`) for what the stages act
 * on, and the raw pairs (`req.rawHeaders`, names as sent, repeats kept apart) for what is logged;
 * the service key and a client's own provider credential (`Svc-Auth`).
 */
import type { IncomingMessage } from 'node:http';
import { bearerToken } from '../../shared/apikey.ts';
import { GatewayError } from '../errors.ts';

/** The value of a header (`name` lower-case) as Node parsed it; the first of an array; null when absent. */
export function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
}

/** The first value of a header (`name` lower-case) as the client sent it, from `rawHeaders`; null when absent. */
export function clientHeader(req: IncomingMessage, name: string): string | null {
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1]!;
  return null;
}

/**
 * Parses `Svc-Property-<Name>` headers into `{name: value}` (names lower-cased; repeated headers
 * joined with ", "), from `rawHeaders` so repeated headers stay separate. The object has no
 * prototype: a property named "__proto__" or "constructor" is just a name.
 */
export function properties(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (!k.startsWith('svc-property-') || k.length === 'svc-property-'.length) continue;
    const name = k.slice('svc-property-'.length);
    out[name] = Object.hasOwn(out, name) ? `${out[name]}, ${raw[i + 1]}` : raw[i + 1]!;
  }
  return out;
}

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
