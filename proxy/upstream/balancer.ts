/**
 * The router's latency balancer counts each attempt in flight; this ends the count exactly once per
 * attempt, whichever comes first: its outcome, a retry, or the client leaving.
 *
 * What an outcome tells the balancer (../balancer/latency.ts):
 * - an answer below 400: its time to the response headers, the latency estimate's sample;
 * - a failure of the provider — the router's failure class ({@link isRetryable}: connection error or
 *   timeout, 429, 5xx): a penalty (`LatencyBalancer.fail`, capped at the upstream timeout), never its
 *   own time, which for an error answered at once would make the provider look the fastest;
 * - any other 4xx (400, 404, 413, 422 …, and 401/403, which with `Svc-Auth` are the client's own
 *   credential refused): nothing about the provider's speed, so no sample — the attempt only leaves
 *   the in-flight count. Validation errors are answered before any inference, so their time would
 *   make a provider that gets bad requests look fast.
 */
import type { RequestContext } from '../pipeline/context.ts';
import { isRetryable } from '../router.ts';

/**
 * Ends the current attempt's count (a no-op when it is not counted or already ended).
 * @param rttMs time to the response headers (ms), which updates the latency estimate; null only ends the count.
 */
export function finishBalancer(ctx: RequestContext, rttMs: number | null): void {
  if (!ctx.balancerOpen) return;
  ctx.balancerOpen = false;
  ctx.router!.latency.finish(ctx.provider!, rttMs);
}

/**
 * Ends the current attempt's count as a failure of the provider: the latency estimate takes the
 * penalty max(estimate, elapsedMs) × `FAILURE_PENALTY` (../balancer/latency.ts), capped at
 * `server.upstream-timeout`.
 * @param elapsedMs time from sending the attempt to its failure (ms).
 */
export function failBalancer(ctx: RequestContext, elapsedMs: number): void {
  if (!ctx.balancerOpen) return;
  ctx.balancerOpen = false;
  ctx.router!.latency.fail(ctx.provider!, elapsedMs, ctx.gw.config.server.upstreamTimeoutMs);
}

/**
 * Ends the current attempt's count by the provider's status (see the file's comment).
 * @param status the provider's HTTP status.
 * @param rttMs time to the response headers (ms).
 */
export function settleBalancer(ctx: RequestContext, status: number, rttMs: number): void {
  if (status < 400) finishBalancer(ctx, rttMs);
  else if (isRetryable(status)) failBalancer(ctx, rttMs);
  else finishBalancer(ctx, null);
}
