/**
 * Stage rate-limit: GCRA per API key and per user (`Svc-User-Id` within the key's organization),
 * the global limits then the router's. Synchronous with the in-memory store; a Promise (the pipeline
 * suspends) with Redis.
 */
import { GatewayError } from '../errors.ts';
import { header, userIdOf } from '../pipeline/headers.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { rateLimitHeaders, type RateLimitDecision } from '../ratelimit/index.ts';

/**
 * Checks the request against `gw.rateLimiter` and keeps its rate-limit headers for the answer.
 * @throws {GatewayError} 429 `rate_limit_exceeded` (with `Retry-After`), or 503
 *   `rate_limit_store_unavailable` when the store cannot answer and fails closed; the same error
 *   rejects the Promise of an asynchronous store.
 */
export function rateLimit(ctx: RequestContext): Promise<void> | void {
  // An empty or blank Svc-User-Id is no user (no per-user bucket), as the log record has it.
  const userId = userIdOf(header(ctx.req, 'svc-user-id'));
  // The organization keys the per-user buckets: one organization's "alice" is not another's.
  const decision = ctx.gw.rateLimiter!.check({ organizationId: ctx.key?.organizationId ?? '', apiKeyHash: ctx.keyHash, userId, router: ctx.routerName });
  if (decision instanceof Promise) return decision.then((d) => applyDecision(ctx, d));
  applyDecision(ctx, decision);
}

/** Admits the request (its headers kept on `ctx`) or throws its 429/503. */
export function applyDecision(ctx: RequestContext, d: RateLimitDecision): void {
  const headers = rateLimitHeaders(d);
  if (!d.allowed) {
    ctx.gw.metrics?.rateLimitDenials.inc({ policy: d.policy });
    if (d.storeUnavailable) throw new GatewayError(503, 'rate-limit store unavailable', 'server_error', 'rate_limit_store_unavailable', null, headers);
    throw new GatewayError(429, `rate limit exceeded (${d.policy}); retry after ${headers['retry-after'] ?? 'a while'} s`, 'rate_limit_exceeded', 'rate_limit_exceeded', null, headers);
  }
  ctx.rateLimitHeaders = headers;
}
