/**
 * The router's latency balancer counts each attempt in flight; this ends the count exactly once per
 * attempt, whichever comes first: its outcome, a retry, or the client leaving.
 */
import type { RequestContext } from '../pipeline/context.ts';

/**
 * Ends the current attempt's count (a no-op when it is not counted or already ended).
 * @param rttMs time to the response headers (ms), which updates the latency estimate; null only ends the count.
 */
export function finishBalancer(ctx: RequestContext, rttMs: number | null): void {
  if (!ctx.balancerOpen) return;
  ctx.balancerOpen = false;
  ctx.router!.latency.finish(ctx.provider!, rttMs);
}
