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
 * The refusal of every request while the proxy's own control-plane key is refused by admin
 * (proxy/controlplane.ts dropped the keys it held). A 503, not a 401: the caller's key is not at
 * fault, the gateway's configuration is, and a 401 would have clients discard good keys; no
 * Retry-After, since it lasts until the operator acts.
 */
function keyRevokedError(): GatewayError {
  return new GatewayError(
    503,
    "the gateway cannot authenticate requests: its control-plane API key (SVC_CONTROL_PLANE_API_KEY) was revoked or is unknown to admin, so it no longer trusts the keys it held; the gateway's operator must give it a new key",
    'server_error',
    'control_plane_key_revoked',
  );
}

/**
 * Sets `ctx.key` and `ctx.keyHash`, and marks the key used (reported to admin in batches).
 * @throws {GatewayError} 503 `auth_not_ready` before the first key snapshot (never admit an unknown
 *   key), 503 `control_plane_key_revoked` while the proxy's own control-plane key is refused (its
 *   held keys dropped: it could not learn of revocations), 401 `invalid_api_key` for a missing or
 *   unknown key.
 */
export function authenticate(ctx: RequestContext): void {
  const controlPlane = ctx.gw.controlPlane!;
  if (!controlPlane.ready) {
    if (controlPlane.keyRevoked) throw keyRevokedError();
    throw new GatewayError(503, 'auth data not ready', 'server_error', 'auth_not_ready', null, { 'retry-after': '1' });
  }
  const key = serviceKey(ctx.req);
  if (!key) throw new GatewayError(401, 'missing API key: send "Authorization: Bearer <API key>" or "x-api-key: <API key>" (or "Svc-Auth: Bearer <API key>" with your own provider key)', 'invalid_request_error', 'invalid_api_key');
  const hash = hashApiKey(key);
  const entry = controlPlane.lookup(hash);
  if (!entry) throw new GatewayError(401, 'invalid API key', 'invalid_request_error', 'invalid_api_key');
  controlPlane.markUsed(entry);
  ctx.key = entry;
  ctx.keyHash = hash;
}
