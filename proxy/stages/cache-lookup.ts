/**
 * cache-lookup (issue 18), after choose-provider (the key needs the provider and the model): a
 * request with `Svc-Cache-Enabled: true` gets its cache key and options (`ctx.cache`, read by
 * upstream/response.ts for `Svc-Cache: MISS` and by observers/cache-writer.ts to store the answer),
 * and a full bucket answers it without calling the provider (`Svc-Cache: HIT`, ../cache/replay.ts).
 * A bucket with fewer answers than the request's `Svc-Cache-Bucket-Max-Size` is a miss: the
 * provider's answer joins it. Every other request pays one header lookup here.
 *
 * The memory store answers synchronously; Redis with a Promise bounded by its timeout (resolving
 * null when Redis is down: a miss). Router retries re-enter before this stage and pass it.
 */
import { cacheEnabled, cacheOptions } from '../cache/request.ts';
import { nextTurn } from '../cache/index.ts';
import { cacheKey } from '../cache/key.ts';
import { answerFromCache } from '../cache/replay.ts';
import type { CachedBucket } from '../cache/types.ts';
import type { RequestContext } from '../pipeline/context.ts';
import { resume, SUSPEND } from '../pipeline/pipeline.ts';

/** The endpoint kinds whose answers are cached (not counts, not stored-response calls). */
const CACHEABLE: ReadonlySet<string> = new Set(['chat', 'embeddings', 'messages', 'responses']);

/** See the module comment. @throws {GatewayError} 400 naming a cache header with a bad value. */
export function cacheLookup(ctx: RequestContext): void | typeof SUSPEND {
  const enabled = ctx.req.headers['svc-cache-enabled'];
  if (enabled === undefined || ctx.cache !== null || !CACHEABLE.has(ctx.kind.name)) return;
  if (!cacheEnabled(enabled)) return;
  const gw = ctx.gw;
  const o = cacheOptions(ctx.req, gw.config.cache.defaultTtlMs);
  const key = cacheKey({
    organization: ctx.key?.organizationId ?? '',
    seed: o.seed,
    endpoint: ctx.kind.name,
    provider: ctx.provider ?? '',
    model: ctx.model ?? '',
    body: ctx.body as unknown as Record<string, unknown>,
    ignore: o.ignore,
  });
  ctx.cache = { key, ttlMs: o.ttlMs, bucketMax: o.bucketMax, write: o.write, hitOf: null, chunks: null, bytes: 0, streamed: false, usage: null, replay: null, replayAt: 0 };
  // `Cache-Control: no-cache`: the provider answers, whatever the cache holds.
  if (!o.lookup) return missed(ctx);
  const found = gw.cache.get(key);
  if (found === null) return missed(ctx);
  if (!(found instanceof Promise)) return serve(ctx, found);
  found.then((bucket) => settle(ctx, bucket));
  return SUSPEND;
}

/** A full bucket: its next answer in turn is the request's (SUSPEND: answered); else a miss (undefined). */
function serve(ctx: RequestContext, bucket: CachedBucket): void | typeof SUSPEND {
  const cache = ctx.cache!;
  if (bucket.size < cache.bucketMax) return missed(ctx);
  ctx.gw.metrics?.cacheHits.inc();
  answerFromCache(ctx, bucket.answer(nextTurn(cache.key, cache.bucketMax)));
  return SUSPEND;
}

/** Counts a miss (the request runs on to the provider). */
function missed(ctx: RequestContext): void {
  ctx.gw.metrics?.cacheMisses.inc();
}

/** A Redis read came back: answer a hit, else run on (unless the client left meanwhile). */
function settle(ctx: RequestContext, bucket: CachedBucket | null): void {
  if (ctx.finished) return;
  if (bucket === null) missed(ctx);
  else if (serve(ctx, bucket) === SUSPEND) return;
  resume(ctx);
}
