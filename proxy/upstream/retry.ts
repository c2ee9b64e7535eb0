/**
 * Router retries: after a retryable outcome (connection error or timeout = status 0, 429, 5xx)
 * before any byte reached the client, wait the router's backoff (../router.ts: exponential with full
 * jitter, or constant) and run the pipeline again from choose-provider — to the next-best provider
 * when the router has another — or from translate when the client pinned the provider. When every
 * provider the retry may go to asked to wait (a 429's `Retry-After`), the retry waits for the first
 * of them, at most `retries.max-delay`; past that there is no retry, and the provider's 429 (with its
 * `Retry-After`) is the answer.
 */
import { isRetryable } from '../router.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { run } from '../pipeline/pipeline.ts';
import { failBalancer } from './balancer.ts';

/**
 * Records the attempt's outcome in the router's health and schedules a retry when the policy allows.
 * @param status the provider's status, 0 for a connection error or timeout.
 * @param retryAfterMs the provider's `Retry-After` (ms; at most the router's `health.cool-down`, ../balancer/retry-after.ts), or null.
 * @param error the connection error's code, or null.
 * @returns true when a retry was scheduled (the caller must not answer the client).
 */
export function retryIfAllowed(ctx: RequestContext, status: number, retryAfterMs: number | null, error: string | null): boolean {
  const router = ctx.router;
  if (!router) return false;
  const latency = performance.now() - ctx.attemptStartMs;
  router.record(ctx.provider!, status, retryAfterMs);
  if (!isRetryable(status) || ctx.res.headersSent || ctx.res.destroyed) return false;
  const backoff = router.retryDelayMs(ctx.attemptCount);
  if (backoff === null) return false;
  const delay = retryAfterWait(ctx, backoff);
  if (delay === null) return false;
  ctx.attempts.push({ provider: ctx.provider!, status, latencyMs: latency, error });
  // Every retryable outcome (timeout and connection error included) is the provider's failure.
  failBalancer(ctx, latency);
  // Counted apart from the requests, which count this request once when it finishes.
  ctx.gw.metrics?.routerRetries.inc({ router: router.config.name, provider: ctx.provider!, status: String(status) });
  ctx.phase = 'none';
  ctx.deadlineMs = Infinity;
  // A timer per retry is the rare path; the request is not otherwise waiting on anything.
  setTimeout(retryNow, delay, ctx);
  return true;
}

/**
 * The delay of a retry whose backoff is `backoff` (ms): the backoff while a provider it may go to did
 * not ask to wait, else until the first wait is over (1 ms more: a timer may fire within the
 * millisecond before), at most the router's `retries.max-delay`. Null when that wait is longer than
 * `max-delay`: no retry.
 */
function retryAfterWait(ctx: RequestContext, backoff: number): number | null {
  const router = ctx.router!;
  const wait = router.retryWaitMs(ctx.kind.name, ctx.body!.model, ctx.tried, ctx.pinned ? ctx.provider : null);
  if (wait === 0) return backoff;
  const maxDelayMs = router.config.retries!.maxDelayMs;
  if (wait > maxDelayMs) return null;
  return Math.max(backoff, Math.min(maxDelayMs, Math.ceil(wait) + 1));
}

/** The backoff is over: choose again (unless pinned) and send, through the same stages. */
function retryNow(ctx: RequestContext): void {
  if (ctx.finished || ctx.res.destroyed) return;
  const pipeline = ctx.gw.pipeline;
  run(ctx, ctx.pinned ? pipeline.pinnedRetryAt : pipeline.retryAt);
}
