/**
 * The response cache's shapes (issue 18): what one stored answer holds, a bucket as read, the store both kinds
 * (memory, Redis) implement, and what a request that opted in (`Svc-Cache-Enabled: true`) carries
 * on its context. A key holds a *bucket*: up to `Svc-Cache-Bucket-Max-Size` (≤ 20) different
 * answers to the same request, served in turn once full.
 */
import type { ChatUsage } from '../../shared/chat.ts';

/** Most answers one key keeps (`Svc-Cache-Bucket-Max-Size` at most). */
export const MAX_BUCKET_SIZE = 20;

/** One answer as its client got it, kept to be served again. */
export interface CachedAnswer {
  /** The request whose answer this is (a hit's `cache_reference_id`). */
  requestId: string;
  /** HTTP status (2xx: only successful answers are kept). */
  status: number;
  /** True for an SSE stream (replayed as a stream, event by event). */
  streamed: boolean;
  /** The answer's `content-type`. */
  contentType: string;
  /** The body bytes the client received (decoded: providers are asked for identity encoding). */
  body: Buffer;
  /**
   * The provider's usage (OpenAI's shape, tokens) that the answer's stream did not carry to its client
   * (`TranslatorCall.withheldUsage`: a translated chat stream without `stream_options.include_usage`), so that a
   * hit's log record still has the answer's tokens; null or absent when the body carries its usage, or has none.
   */
  usage?: ChatUsage | null;
}

/** How full a memory store is (`/health`'s `cache`, the `svc_proxy_cache_*` gauges). */
export interface CacheUsage {
  /** Buckets held (keys with at least one answer). */
  buckets: number;
  /** Bytes of the arena those buckets take (heads included). */
  bytes: number;
  /** The arena's size (bytes, `cache.max-size` rounded down to a multiple of 8). */
  maxBytes: number;
}

/**
 * A miss's answer handed to a store: as a {@link CachedAnswer}, but its body as the pieces the client
 * got (`bytes` in all), so a store copies them once, into wherever it keeps them.
 */
export interface AnswerToStore extends Omit<CachedAnswer, 'body'> {
  chunks: readonly Buffer[];
  bytes: number;
}

/**
 * A key's bucket as a store found it: how many answers it holds, and one of them on request (a hit
 * serves one answer of the bucket, so only that one is decoded and copied).
 */
export interface CachedBucket {
  /** Answers held (1..{@link MAX_BUCKET_SIZE}). */
  readonly size: number;
  /**
   * Answer `index` (0 = the oldest, up to `size` − 1). The memory store's bucket reads the store
   * itself: ask before the store is written again (in the same tick as `get`).
   */
  answer(index: number): CachedAnswer;
}

/**
 * Where answers are kept. `get` is synchronous in memory and a Promise with Redis (bounded by the
 * store's timeout; it resolves null, never rejects, when Redis is down: a miss, not an error).
 */
export interface CacheStore {
  readonly name: 'memory' | 'redis';
  /** The key's bucket, or null when empty or expired. */
  get(key: string): CachedBucket | null | Promise<CachedBucket | null>;
  /**
   * Adds `answer` to the key's bucket unless it already holds `bucketMax`; with `replace`, the
   * bucket is emptied first (`Cache-Control: no-cache`: the fresh answer replaces what was held).
   * The key lives `ttlMs` (ms) from now. Fire and forget: failures are logged, never thrown.
   */
  add(key: string, answer: AnswerToStore, ttlMs: number, bucketMax: number, replace?: boolean): void;
  /** How full the store is; null for Redis (its figures live in Redis: `INFO memory`, `DBSIZE`). */
  usage(): CacheUsage | null;
  /** Resolves once the store can serve (Redis connected or its timeout waited); never rejects. */
  whenReady(): Promise<void>;
  /** Flushes and disconnects. */
  close(): Promise<void>;
}

/** What a request with `Svc-Cache-Enabled: true` carries (`ctx.cache`); see stages/cache-lookup.ts. */
export interface CacheRequest {
  /** SHA-256 (hex) of the organization, seed, endpoint kind, provider, model and canonical body. */
  key: string;
  /** Lifetime of an answer stored by this request (ms). */
  ttlMs: number;
  /** `Svc-Cache-Bucket-Max-Size` (1..20). */
  bucketMax: number;
  /** What becomes of a miss's answer: added to its bucket, replacing it (`Cache-Control: no-cache`), or not stored (`no-store`). */
  write: 'add' | 'replace' | 'none';
  /** The request whose answer was served (a hit), else null. */
  hitOf: string | null;
  /** A miss's answer as the client got it, piece by piece; null when not recorded (or too large). */
  chunks: Buffer[] | null;
  /** Bytes in {@link chunks}. */
  bytes: number;
  /** The miss's answer is a stream. */
  streamed: boolean;
  /** A hit's: the usage stored with its answer ({@link CachedAnswer.usage}), for its log record; else null. */
  usage: ChatUsage | null;
  /** A hit's stream being replayed: its events, and the next to write. */
  replay: Buffer[] | null;
  replayAt: number;
}
