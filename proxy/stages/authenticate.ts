/**
 * Stage authenticate (`svc.features` auth or observability): the service key's SHA-256 looked up in
 * the key set the control plane keeps in memory; no database call on the request path. The key
 * comes in `Authorization: Bearer`, in `x-api-key` (as Anthropic clients send theirs), or in
 * `Svc-Auth: Bearer` when the client's own `Authorization`/`x-api-key` is for its provider.
 */
import { hashApiKey } from '../../shared/apikey.ts';
import { GatewayError } from '../errors.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { serviceKey } from '../pipeline/headers.ts';

/**
 * Sets `ctx.key` and `ctx.keyHash`, and marks the key used (reported to admin in batches).
 * @throws {GatewayError} 503 `auth_not_ready` before the first key snapshot (never admit an unknown
 *   key), 401 `invalid_api_key` for a missing or unknown key.
 */
export function authenticate(ctx: RequestContext): void {
  const controlPlane = ctx.gw.controlPlane!;
  if (!controlPlane.ready) throw new GatewayError(503, 'auth data not ready', 'server_error', 'auth_not_ready', null, { 'retry-after': '1' });
  const key = serviceKey(ctx.req);
  if (!key) throw new GatewayError(401, 'missing API key: send "Authorization: Bearer <API key>" or "x-api-key: <API key>" (or "Svc-Auth: Bearer <API key>" with your own provider key)', 'invalid_request_error', 'invalid_api_key');
  const hash = hashApiKey(key);
  const entry = controlPlane.lookup(hash);
  if (!entry) throw new GatewayError(401, 'invalid API key', 'invalid_request_error', 'invalid_api_key');
  controlPlane.markUsed(entry);
  ctx.key = entry;
  ctx.keyHash = hash;
}
