/**
 * The Redis cache store (`cache.store: redis`): every gateway on the same Redis shares answers. A
 * key's bucket is a list, `svc:cache:<sha256>`, of answers as JSON (the body in base64, the usage a translated
 * stream withheld from its client when there is one), oldest
 * first; an add is one pipeline `RPUSH`, `LTRIM` to the bucket size, `PEXPIRE`. A read is `LRANGE`.
 * Redis down or slow means a miss, never an error: a read resolves null when the client is not
 * connected (nothing waits for a connection) or the command fails or passes `timeoutMs`, and
 * failed writes are dropped (logged at most once per 10 s). ioredis loads with the store.
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeRedis, connectRedis, waitForReady } from '../../shared/redis-client.ts';
import type { ChatUsage } from '../../shared/chat.ts';
import type { AnswerToStore, CachedAnswer, CachedBucket, CacheStore } from './types.ts';

/**
 * An answer as stored in Redis: request id, status, streamed, content type, body (base64), and the usage its
 * stream withheld (`CachedAnswer.usage`; left out when none).
 */
interface StoredAnswer {
  r: string;
  s: number;
  t: boolean;
  c: string;
  b: string;
  u?: ChatUsage;
}

/** Least time between two warnings (ms). */
const WARN_INTERVAL_MS = 10_000;
/** How long {@link RedisCacheStore.whenReady} waits at most for the first connection (ms). */
const READY_WAIT_MS = 2_000;

/** See the module comment. */
export class RedisCacheStore implements CacheStore {
  readonly name = 'redis';
  private client: Redis | null = null;
  private readonly clientReady: Promise<Redis>;
  private closed = false;
  private lastWarnAt = -Infinity;

  /**
   * @param url `redis://…` or `rediss://…`.
   * @param timeoutMs bounds each command (ms).
   * @param prefix the key prefix (tests use their own).
   */
  constructor(
    url: string,
    timeoutMs: number,
    private readonly logger: Logger | null,
    private readonly prefix = 'svc:cache:',
  ) {
    this.clientReady = connectRedis(url, timeoutMs, (err) => this.warn(err, 'cache: redis connection error'), () => this.closed, 'cache: closed').then(
      (redis) => (this.client = redis),
    );
    this.clientReady.catch(() => {});
  }

  /** Logs a failure at most once per {@link WARN_INTERVAL_MS}. */
  private warn(err: Error, what: string): void {
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_INTERVAL_MS) return;
    this.lastWarnAt = now;
    this.logger?.warn({ err: err.message }, what);
  }

  /** The client when connected, else null (a miss: nothing waits for Redis). */
  private ready(): Redis | null {
    const redis = this.client;
    return redis !== null && redis.status === 'ready' && !this.closed ? redis : null;
  }

  /** See {@link CacheStore.get}: `LRANGE`; null on any failure. */
  async get(key: string): Promise<CachedBucket | null> {
    const redis = this.ready();
    if (redis === null) return null;
    try {
      const items = await redis.lrange(this.prefix + key, 0, -1);
      if (items.length === 0) return null;
      return new ListBucket(items.map(fromStored));
    } catch (err) {
      this.warn(err as Error, 'cache: read failed (answered as a miss)');
      return null;
    }
  }

  /** See {@link CacheStore.add}: one pipeline (RPUSH, LTRIM, PEXPIRE; with `replace`, a MULTI starting with DEL); dropped when Redis is down. */
  add(key: string, answer: AnswerToStore, ttlMs: number, bucketMax: number, replace = false): void {
    const redis = this.ready();
    if (redis === null) return;
    const k = this.prefix + key;
    const stored: StoredAnswer = { r: answer.requestId, s: answer.status, t: answer.streamed, c: answer.contentType, b: Buffer.concat(answer.chunks, answer.bytes).toString('base64') };
    if (answer.usage) stored.u = answer.usage;
    // MULTI, so that another gateway's read never sees the bucket emptied and not yet refilled.
    const batch = replace ? redis.multi().del(k) : redis.pipeline();
    batch
      .rpush(k, JSON.stringify(stored))
      .ltrim(k, 0, bucketMax - 1)
      .pexpire(k, ttlMs)
      .exec()
      .catch((err: Error) => this.warn(err, 'cache: write lost'));
  }

  /** See {@link CacheStore.usage}: null (the figures live in Redis). */
  usage(): null {
    return null;
  }

  /** See {@link CacheStore.whenReady}: connected, or {@link READY_WAIT_MS} waited, or Redis refused. */
  async whenReady(): Promise<void> {
    const deadline = Date.now() + READY_WAIT_MS;
    const redis = await Promise.race([this.clientReady.catch(() => null), new Promise<null>((r) => setTimeout(r, READY_WAIT_MS, null).unref())]);
    if (redis !== null) await waitForReady(redis, Math.max(0, deadline - Date.now()), 'cache', this.closed).catch(() => {});
  }

  /** Quits (or drops a connection not made). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client) await closeRedis(this.client);
  }
}

/** A bucket read from Redis: its answers decoded (LRANGE brought them all). */
class ListBucket implements CachedBucket {
  readonly size: number;
  constructor(private readonly answers: readonly CachedAnswer[]) {
    this.size = answers.length;
  }

  /** See {@link CachedBucket.answer}. */
  answer(index: number): CachedAnswer {
    return this.answers[index]!;
  }
}

/** A stored answer back as a {@link CachedAnswer}. */
function fromStored(text: string): CachedAnswer {
  const s = JSON.parse(text) as StoredAnswer;
  return { requestId: s.r, status: s.s, streamed: s.t, contentType: s.c, body: Buffer.from(s.b, 'base64'), usage: s.u ?? null };
}
