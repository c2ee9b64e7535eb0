/**
 * Stage forward: the last request stage. It sends the provider's request with undici's `dispatch`
 * over keep-alive pools, with one {@link UpstreamExchange} handler object per attempt; from there
 * the response side (../upstream/) takes over. (node:http's client measured ~16 µs of CPU more per
 * request, http-proxy-3 ~45 µs more than that; bench/README.md.)
 */
import type { RequestContext } from '../pipeline/context.ts';
import { UpstreamExchange } from '../upstream/exchange.ts';

/**
 * Starts an attempt: counts it in the router's latency balancer, arms the provider's timeout, and
 * dispatches the provider's URL, method and headers exactly (the client's `Authorization` and
 * `Svc-*` headers never leave) with the body in one write. A request undici rejects outright (a bad
 * header) reaches the exchange's `onError` before `dispatch` returns.
 */
export function forward(ctx: RequestContext): void {
  // The client left while an async stage (a signing provider) or a retry's backoff ran: nothing to send.
  if (ctx.finished) return;
  const up = ctx.upstream!;
  if (ctx.router) {
    ctx.router.latency.start(ctx.provider!);
    ctx.balancerOpen = true;
  }
  ctx.attemptStartMs = performance.now();
  ctx.timedOut = false;
  ctx.attemptCount++;
  ctx.tried.add(ctx.provider!);
  const exchange = new UpstreamExchange(ctx);
  ctx.exchange = exchange;
  ctx.phase = 'upstream';
  ctx.deadlineMs = ctx.attemptStartMs + ctx.gw.config.server.upstreamTimeoutMs;
  const target = dispatchTarget(up.url);
  ctx.gw.upstreamAgent.dispatch({ origin: target.origin, path: target.path, method: up.method, headers: up.headers, body: up.body }, exchange);
}

/**
 * `origin` and `path` of a provider URL for undici's dispatch, kept per URL object (a transport may
 * return the same one for every request; `UpstreamRequest.url` is not changed once returned).
 */
const dispatchTargets = new WeakMap<URL, { origin: string; path: string }>();
function dispatchTarget(url: URL): { origin: string; path: string } {
  let t = dispatchTargets.get(url);
  if (t === undefined) {
    t = { origin: url.origin, path: url.pathname + url.search };
    dispatchTargets.set(url, t);
  }
  return t;
}
