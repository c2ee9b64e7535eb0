/**
 * The proxy's `GET /health`: whether it can serve requests, for a load balancer's probe, and the
 * state behind it. 503 when it cannot, with a `status` naming why (the first that applies):
 * - `control_plane_key_revoked`: its own control-plane key is refused by admin; it dropped the keys
 *   it held and answers every request 503 `control_plane_key_revoked` (proxy/controlplane.ts);
 * - `not_ready`: no key snapshot yet (admin not reached since the start): every request 503 `auth_not_ready`;
 * - `rate_limit_store_unavailable`: `rate-limit-store.fail-mode: closed` and Redis is down: every
 *   limited request 503 `rate_limit_store_unavailable`.
 * Otherwise 200: `ok`, or `degraded` when it serves but something is down (the control-plane link,
 * while the held keys serve on; the rate-limit store in fail-open mode, requests then unlimited).
 * `reason` says it in a sentence (null when `ok`). The other members (`features`, `controlPlane`,
 * `logQueue`, `cache`, `routers`) are as before, plus `rateLimit` (the store's state, null
 * without limits). Cheap: a few reads of in-memory state, no I/O.
 */
import type { GatewayRuntime } from '../pipeline/runtime.ts';

/** Why /health answers what it does: `status`, its sentence, and the HTTP status (200 or 503). */
interface Verdict {
  status: 'ok' | 'degraded' | 'not_ready' | 'control_plane_key_revoked' | 'rate_limit_store_unavailable';
  reason: string | null;
  httpStatus: 200 | 503;
}

/** The verdict of {@link healthAnswer}, from the control-plane link and the rate-limit store (see the module docstring). */
function verdict(gw: GatewayRuntime): Verdict {
  const link = gw.controlPlane?.health() ?? null;
  const store = gw.rateLimiter?.storeState() ?? null;
  if (link?.keyRevoked) {
    return { status: 'control_plane_key_revoked', httpStatus: 503, reason: "the proxy's control-plane API key (SVC_CONTROL_PLANE_API_KEY) was revoked or is unknown to admin: the keys it held were dropped and every request is refused; give it a new key and restart it" };
  }
  if (link && !link.ready) return { status: 'not_ready', httpStatus: 503, reason: `no API key snapshot from admin yet: every request is refused (${link.downReason ?? 'waiting for it'})` };
  if (store && !store.available && store.failMode === 'closed') {
    return { status: 'rate_limit_store_unavailable', httpStatus: 503, reason: 'the rate-limit store (Redis) is unreachable and rate-limit-store.fail-mode is closed: rate-limited requests are refused' };
  }
  const down: string[] = [];
  if (link && !link.connected) down.push(`the control plane is unreachable (${link.downReason ?? 'link down'}): serving with the keys held, new keys and revocations wait for it`);
  if (store && !store.available) down.push(`the rate-limit store (Redis) is unreachable and rate-limit-store.fail-mode is ${store.failMode}: ${store.failMode === 'local' ? 'each proxy limits requests on its own' : 'requests are not rate limited'}`);
  return down.length > 0 ? { status: 'degraded', httpStatus: 200, reason: down.join('; ') } : { status: 'ok', httpStatus: 200, reason: null };
}

/**
 * The `/health` answer: its HTTP status (200, or 503 when the proxy cannot serve) and JSON body.
 * Never throws.
 */
export function healthAnswer(gw: GatewayRuntime): { httpStatus: number; body: string } {
  const v = verdict(gw);
  const controlPlane = gw.controlPlane;
  const body = JSON.stringify({
    status: v.status,
    reason: v.reason,
    features: gw.config.features,
    controlPlane: controlPlane?.health() ?? null,
    logQueue: controlPlane?.queue.getStats() ?? null,
    rateLimit: gw.rateLimiter?.storeState() ?? null,
    cache: { store: gw.cache.name, ...gw.cache.usage() },
    routers: Object.fromEntries([...gw.routers].map(([name, r]) => [name, r.healthView()])),
  });
  return { httpStatus: v.httpStatus, body };
}
