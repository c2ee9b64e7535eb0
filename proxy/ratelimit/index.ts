/**
 * Rate limiting per API key and per user with GCRA (see ./gcra.ts for the algorithm and its
 * sources), over up to four buckets per request, checked in this order:
 *   global per-api-key, global per-user, router per-api-key, router per-user.
 * A request is admitted only if every applicable bucket admits it, and a request denied by any bucket
 * consumes from none (check all, then commit all; one Lua script on Redis).
 *
 * Bucket keys: `<prefix>global:key:<apiKeyHash>`, `<prefix>global:user:<organizationId>:<userId>`,
 * `<prefix>router:<name>:key:<apiKeyHash>`, `<prefix>router:<name>:user:<organizationId>:<userId>`;
 * prefix `svc:rl:`. A user id is the client's `Svc-User-Id`, so the same id in two organizations is
 * two users: the organization is part of the key (it is the server's id, never the client's, and
 * has no ':', so no user id can reach into another organization's keys). An API key's hash is
 * unique across organizations (`api_key.key_hash` is unique), so it needs none.
 */
import { createHash } from 'node:crypto';
import type { GatewayConfig, GcraLimit, RateLimitLevel } from '../../shared/config.ts';
import { monotonicNowMs } from './clock.ts';
import type { GcraResult } from './gcra.ts';
import { MemoryStore } from './memory-store.ts';
import { RedisStore } from './redis-store.ts';
import type { Bucket, RateLimitStore } from './store.ts';
import { StoreFailure, type StoreFailureLogger } from './store-failure.ts';

export { gcra, type GcraResult, type GcraState } from './gcra.ts';
export { MemoryStore } from './memory-store.ts';
export { RedisStore } from './redis-store.ts';
export type { Bucket, RateLimitStore } from './store.ts';
export { monotonicNowMs } from './clock.ts';
export { STORE_WARN_INTERVAL_MS } from './store-failure.ts';

/**
 * What a request is limited by.
 * - `organizationId`: the organization of the caller's API key (`''` without keys: one tenant); part
 *   of every per-user bucket key.
 * - `apiKeyHash`: the hash of the caller's API key; `null` skips the per-api-key levels.
 * - `userId`: the `Svc-User-Id` header value; `null` skips the per-user levels. Values longer than
 *   128 characters are keyed by their SHA-256, so bucket keys stay short.
 * - `router`: the router name of `/router/<name>/…`, or `null` (no router levels; an unknown name
 *   has none either).
 * - `cost`: the request's weight in cells, default 1 (finite, ≥ 0).
 */
export interface RateLimitRequest {
  organizationId: string;
  apiKeyHash: string | null;
  userId: string | null;
  router: string | null;
  cost?: number;
}

/**
 * The verdict for one request, from the level that decided it: when denied, the denying bucket with
 * the longest wait; when admitted, the tightest bucket (fewest remaining).
 * - `allowed`: admit (true) or answer 429 (or 503 when `storeUnavailable`).
 * - `limit`: that bucket's capacity (requests per window); `Infinity` when no bucket applied or the
 *   store failed open or closed (a store failure in `local` mode is decided by the local buckets).
 * - `remaining`: cost-1 requests still admissible right now, ≥ 0 (`Infinity` as for `limit`).
 * - `resetAfterMs`: ms until that bucket is full again.
 * - `retryAfterMs`: 0 when admitted; else ms until this request would be admitted (`Infinity` when its
 *   cost exceeds the capacity: it never will be).
 * - `policy`: the bucket that decided: `global-api-key`, `global-user`, `router-<name>-api-key`,
 *   `router-<name>-user`; `none` when no bucket applied; `store-unavailable` when the store failed (fail-mode open or closed).
 * - `windowMs`: that bucket's refill period (ms), for `RateLimit-Policy`'s `w`; absent without a bucket.
 * - `storeUnavailable`: set (with `allowed: false`) when the store failed and `failMode` is `closed`.
 */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetAfterMs: number;
  retryAfterMs: number;
  policy: string;
  windowMs?: number;
  storeUnavailable?: boolean;
}

/**
 * The rate-limit store's state, for the proxy's /health: `store` (`in-memory` | `redis`), its
 * `failMode` (`local` | `open` | `closed`, see ./store-failure.ts), and `available`: always true in
 * memory; for Redis, whether its connection is up (ioredis status `ready`). A connection that is up
 * but whose commands time out is seen only by the requests (limited locally, admitted or refused).
 */
export interface RateLimitStoreState {
  store: 'in-memory' | 'redis';
  failMode: 'local' | 'open' | 'closed';
  available: boolean;
}

/** A configured rate limiter. */
export interface RateLimiter {
  /**
   * Checks a request and, when admitted, consumes `cost` from every applicable bucket.
   * Returns synchronously for the in-memory store and a Promise for Redis (which never rejects: a
   * store failure yields the local store's decision, or a fail-open or fail-closed one).
   * @param nowMs the current time in ms on the limiter's clock; default the injected clock (a
   *   monotonic one, ./clock.ts). The Redis store uses the Redis server's clock instead; its local
   *   fallback uses this one.
   * @throws {RangeError} when `cost` is negative or not finite (synchronously, or as a rejection for Redis).
   */
  check(req: RateLimitRequest, nowMs?: number): RateLimitDecision | Promise<RateLimitDecision>;
  /** The store's state ({@link RateLimitStoreState}); cheap (no I/O). */
  storeState(): RateLimitStoreState;
  /** Stops timers and closes store connections. Never rejects. */
  close(): Promise<void>;
}

/** Dependencies of {@link createRateLimiter}. */
export interface RateLimiterDeps {
  /** Receives store warnings (at most one per STORE_WARN_INTERVAL_MS) and, in `local` mode, an outage's start and end. */
  logger?: StoreFailureLogger;
  /** Called on every check the store could not answer (for a metric), in every fail mode. */
  onStoreError?: (err: Error) => void;
  /** Clock in ms; default {@link monotonicNowMs} (never steps back with the wall clock). */
  clock?: () => number;
  /** Prefix of every bucket key; default `svc:rl:` (tests use a unique one). */
  keyPrefix?: string;
}

/** Retry-After of a fail-closed decision, in ms. */
export const STORE_UNAVAILABLE_RETRY_MS = 1000;
const MAX_RAW_ID_LENGTH = 128;

const NO_LIMIT: RateLimitDecision = Object.freeze({
  allowed: true,
  limit: Infinity,
  remaining: Infinity,
  resetAfterMs: 0,
  retryAfterMs: 0,
  policy: 'none',
}) as RateLimitDecision;

/** One level's limits, with its key prefixes and policy names built once, not per request. */
interface LevelPlan {
  keyPrefix: string; // `<prefix><level>:key:`, followed by the key hash
  userPrefix: string; // `<prefix><level>:user:`, followed by `<organizationId>:<userId>`
  keyPolicy: string; // `global-api-key` or `router-<name>-api-key`
  userPolicy: string; // `global-user` or `router-<name>-user`
  perApiKey: GcraLimit | null;
  perUser: GcraLimit | null;
}

function hasLimits(level: RateLimitLevel): boolean {
  return level.perApiKey !== null || level.perUser !== null;
}

/** The plan of a level (`name`: `global` or `router:<name>`; `policy`: `global` or `router-<name>`), null without limits. */
function plan(prefix: string, name: string, policy: string, level: RateLimitLevel): LevelPlan | null {
  if (!hasLimits(level)) return null;
  return {
    keyPrefix: `${prefix}${name}:key:`,
    userPrefix: `${prefix}${name}:user:`,
    keyPolicy: `${policy}-api-key`,
    userPolicy: `${policy}-user`,
    perApiKey: level.perApiKey,
    perUser: level.perUser,
  };
}

/**
 * Appends a level's buckets to `buckets`: per API key when it has a hash, per user when `userKey`
 * (`<organizationId>:<userId>`, built once per request) is not null.
 */
function addLevel(buckets: Bucket[], p: LevelPlan | null | undefined, apiKeyHash: string | null, userKey: string | null): void {
  if (!p) return;
  if (p.perApiKey && apiKeyHash !== null) buckets.push({ key: p.keyPrefix + apiKeyHash, limit: p.perApiKey, policy: p.keyPolicy });
  if (p.perUser && userKey !== null) buckets.push({ key: p.userPrefix + userKey, limit: p.perUser, policy: p.userPolicy });
}

function safeId(id: string): string {
  return id.length <= MAX_RAW_ID_LENGTH ? id : `sha256:${createHash('sha256').update(id).digest('base64url')}`;
}

/** Combines per-bucket results into one decision (see {@link RateLimitDecision}). */
function decide(buckets: readonly Bucket[], results: readonly GcraResult[]): RateLimitDecision {
  let pick = -1;
  let allowed = true;
  for (let i = 0; i < results.length; i++) if (!results[i]!.allowed) allowed = false;
  for (let i = 0; i < results.length; i++) {
    const r = results[i]!;
    if (pick < 0) {
      if (allowed || !r.allowed) pick = i;
      continue;
    }
    const p = results[pick]!;
    if (allowed) {
      if (r.remaining < p.remaining || (r.remaining === p.remaining && r.resetAfterMs > p.resetAfterMs)) pick = i;
    } else if (!r.allowed && r.retryAfterMs > p.retryAfterMs) {
      pick = i;
    }
  }
  const b = buckets[pick]!;
  const r = results[pick]!;
  return {
    allowed,
    limit: b.limit.capacity,
    remaining: allowed ? r.remaining : 0,
    resetAfterMs: r.resetAfterMs,
    retryAfterMs: allowed ? 0 : r.retryAfterMs,
    policy: b.policy,
    windowMs: b.limit.periodMs,
  };
}

/**
 * Builds the rate limiter of a configuration.
 * @param config the gateway configuration: `rateLimit.global`, each `routers[name].rateLimit`, and
 *   `rateLimit.store` (`in-memory` | `redis`), `redisUrl`, `failMode` (`local` | `open` | `closed`, see
 *   ./store-failure.ts), `storeTimeoutMs`, `cleanupIntervalMs`.
 * @param deps logger, store-error hook, clock and key prefix; all optional.
 * @returns the limiter, or `null` when no limit is configured anywhere (nothing to check).
 * @throws {Error} when the store is `redis` and `redisUrl` is missing. Never connects synchronously:
 *   the Redis client connects in the background.
 */
export function createRateLimiter(config: GatewayConfig, deps: RateLimiterDeps = {}): RateLimiter | null {
  const rl = config.rateLimit;
  const prefix = deps.keyPrefix ?? 'svc:rl:';
  const clock = deps.clock ?? monotonicNowMs;
  const globalPlan = plan(prefix, 'global', 'global', rl.global);
  const routerPlans = new Map<string, LevelPlan>();
  for (const [name, router] of Object.entries(config.routers)) {
    const p = plan(prefix, `router:${name}`, `router-${name}`, router.rateLimit);
    if (p) routerPlans.set(name, p);
  }
  if (!globalPlan && routerPlans.size === 0) return null;

  const failure = new StoreFailure(rl, deps.logger, clock);
  const warn = (err: Error, what: string) => void failure.warn(err, what);

  let store: RateLimitStore;
  if (rl.store === 'redis') {
    if (!rl.redisUrl) throw new Error('rate limit: store "redis" needs rateLimit.redisUrl');
    store = new RedisStore({
      url: rl.redisUrl,
      timeoutMs: rl.storeTimeoutMs,
      onConnectionError: (err) => warn(err, 'rate-limit store: redis connection error'),
    });
  } else {
    store = new MemoryStore({ cleanupIntervalMs: rl.cleanupIntervalMs, clock });
  }

  const bucketsOf = (req: RateLimitRequest): Bucket[] => {
    const buckets: Bucket[] = [];
    // The organization and user part of the key, once for both levels.
    const userKey = req.userId === null ? null : `${req.organizationId}:${safeId(req.userId)}`;
    addLevel(buckets, globalPlan, req.apiKeyHash, userKey);
    if (req.router !== null) addLevel(buckets, routerPlans.get(req.router), req.apiKeyHash, userKey);
    return buckets;
  };

  // Parameters, not a closure per request: the rejection handler below already exists per request.
  const onFailure = (err: Error, buckets: readonly Bucket[], cost: number, nowMs: number): RateLimitDecision => {
    deps.onStoreError?.(err);
    if (rl.failMode === 'local') return decide(buckets, failure.limitLocally(err, buckets, cost, nowMs));
    if (rl.failMode === 'closed') {
      warn(err, 'rate-limit store unavailable; denying requests (fail-closed)');
      return {
        allowed: false,
        limit: Infinity,
        remaining: 0,
        resetAfterMs: 0,
        retryAfterMs: STORE_UNAVAILABLE_RETRY_MS,
        policy: 'store-unavailable',
        storeUnavailable: true,
      };
    }
    warn(err, 'rate-limit store unavailable; admitting requests (fail-open)');
    return { ...NO_LIMIT, policy: 'store-unavailable' };
  };

  return {
    check(req: RateLimitRequest, nowMs?: number): RateLimitDecision | Promise<RateLimitDecision> {
      const cost = req.cost ?? 1;
      if (!Number.isFinite(cost) || cost < 0) {
        const err = new RangeError(`rate limit: cost must be a finite number >= 0, got ${cost}`);
        if (rl.store === 'redis') return Promise.reject(err);
        throw err;
      }
      const buckets = bucketsOf(req);
      if (buckets.length === 0) return rl.store === 'redis' ? Promise.resolve(NO_LIMIT) : NO_LIMIT;
      const now = nowMs ?? clock();
      // The in-memory store answers synchronously and cannot fail; the Redis store's failures are rejections.
      const out = store.checkAll(buckets, cost, now);
      if (Array.isArray(out)) return decide(buckets, out);
      return out.then(
        (results) => {
          if (failure.inOutage) failure.recovered();
          return decide(buckets, results);
        },
        (err: unknown) => onFailure(err instanceof Error ? err : new Error(String(err)), buckets, cost, now),
      );
    },
    storeState: () => ({ store: rl.store, failMode: rl.failMode, available: store instanceof RedisStore ? store.connected : true }),
    close: async () => {
      await Promise.all([store.close(), failure.close()]);
    },
  };
}

/**
 * The response headers of a decision, lower-case names, values as strings:
 * - IETF draft-ietf-httpapi-ratelimit-headers: `ratelimit-policy: "<policy>";q=<limit>;w=<window s>`
 *   and `ratelimit: "<policy>";r=<remaining>;t=<seconds until full>`;
 * - `x-ratelimit-limit`, `x-ratelimit-remaining`, `x-ratelimit-reset` (whole seconds until full, rounded up);
 * - on a denial, `retry-after` in whole seconds rounded up (at least 1); omitted when the request can
 *   never be admitted (cost above capacity).
 * Returns `{}` for an admitted request without a bucket (`policy: 'none'`, fail-open), and only
 * `retry-after` for a fail-closed decision.
 */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!decision.allowed && Number.isFinite(decision.retryAfterMs)) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
  }
  if (!Number.isFinite(decision.limit)) return headers;
  const reset = Math.max(0, Math.ceil(decision.resetAfterMs / 1000));
  const remaining = Math.max(0, decision.remaining);
  headers['ratelimit-policy'] =
    decision.windowMs !== undefined
      ? `"${decision.policy}";q=${decision.limit};w=${Math.max(1, Math.ceil(decision.windowMs / 1000))}`
      : `"${decision.policy}";q=${decision.limit}`;
  headers['ratelimit'] = `"${decision.policy}";r=${remaining};t=${reset}`;
  headers['x-ratelimit-limit'] = String(decision.limit);
  headers['x-ratelimit-remaining'] = String(remaining);
  headers['x-ratelimit-reset'] = String(reset);
  return headers;
}
