/**
 * The Redis response store, used when the rate-limit store is Redis (`rate-limit-store.type: redis`):
 * every gateway process on the same Redis shares the responses, so a conversation can continue
 * (`previous_response_id`) on any of them. One key per response, `svc:responses:<id>`, holding the
 * entry's JSON with a 30-day expiry; Redis' own memory policy bounds the total, and an entry larger
 * than {@link MAX_ENTRY_BYTES} is not written.
 *
 * A write goes to Redis at once, before the response that made it has reached its client (the observer
 * runs before the final bytes are written), so a follow-up request on any gateway finds it: Redis
 * reads and writes in the order they arrive. While the connection is still being made, or while an
 * earlier batch is in flight, writes queue and go together in one pipeline once it is up (and
 * {@link RedisResponseStore.whenReady} lets the proxy listen only after that). Reads wait for a connection being made
 * at most `timeoutMs` and reject when Redis is down (the caller answers 503); nothing queues while
 * disconnected. ioredis is imported when the store is created (as the rate-limit store does).
 */
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { closeRedis, connectRedis, waitForReady } from '../../shared/redis-client.ts';
import { ENTRY_TTL_MS, MAX_ENTRY_BYTES, type ResponseStore, type StoredEntry } from './types.ts';

/** Options of {@link RedisResponseStore}. */
export interface RedisResponseStoreOptions {
  /** `redis://[user:pass@]host:port[/db]` or `rediss://…`. */
  url: string;
  /** Command timeout and the longest a read waits for a connection being made, in ms. */
  timeoutMs: number;
  /** Key prefix (default `svc:responses:`). */
  keyPrefix?: string;
}

/** Most bytes of writes waiting for the next flush; more are dropped (and logged) while Redis is slow. */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;
/** Least time between two warnings of failed writes (ms). */
const WARN_INTERVAL_MS = 10_000;


/** See the module comment. */
export class RedisResponseStore implements ResponseStore {
  readonly name = 'redis';
  private client: Redis | null = null;
  private readonly clientReady: Promise<Redis>;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private pending: string[] = [];
  private pendingBytes = 0;
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  private closed = false;
  private lastWarnAt = -Infinity;

  constructor(
    options: RedisResponseStoreOptions,
    private readonly logger: Logger | null,
  ) {
    this.prefix = options.keyPrefix ?? 'svc:responses:';
    this.timeoutMs = options.timeoutMs;
    this.clientReady = connectRedis(
      options.url,
      options.timeoutMs,
      (err) => this.warn(err, 'response store: redis connection error'),
      () => this.closed,
      'response store: closed',
    ).then((redis) => {
      this.client = redis;
      return redis;
    });
    this.clientReady.catch(() => {});
  }

  /** The ioredis client (for tests); null until ioredis is loaded. */
  get redis(): Redis | null {
    return this.client;
  }

  /** Logs a failure at most once per {@link WARN_INTERVAL_MS}. */
  private warn(err: Error, what: string): void {
    const now = Date.now();
    if (now - this.lastWarnAt < WARN_INTERVAL_MS) return;
    this.lastWarnAt = now;
    this.logger?.warn({ err: err.message }, what);
  }

  /** The client once connected; waits at most `timeoutMs` for a connection being made. */
  private async ready(): Promise<Redis> {
    const redis = this.client ?? (await this.clientReady);
    await waitForReady(redis, this.timeoutMs, 'response store', this.closed);
    return redis;
  }

  /** See {@link ResponseStore.get}: `GET`, after waiting for a connection being made. */
  async get(id: string): Promise<StoredEntry | null> {
    const redis = await this.ready();
    const text = await redis.get(this.prefix + id);
    return text === null ? null : (JSON.parse(text) as StoredEntry);
  }

  /** See {@link ResponseStore.put}: queued for the next flush (a write after close is dropped). */
  put(id: string, entry: StoredEntry): void {
    if (this.closed) return;
    const text = JSON.stringify(entry);
    if (Buffer.byteLength(text) > MAX_ENTRY_BYTES) {
      this.logger?.warn({ responseId: id, bytes: Buffer.byteLength(text), limit: MAX_ENTRY_BYTES }, 'response store: response too large to keep');
      return;
    }
    if (this.pendingBytes + text.length > MAX_PENDING_BYTES) {
      this.warn(new Error('too many writes waiting'), 'response store: write dropped');
      return;
    }
    const redis = this.client;
    if (redis !== null && redis.status === 'ready' && this.pending.length === 0 && this.flushing === null) {
      redis.set(this.prefix + id, text, 'PX', ENTRY_TTL_MS).catch(this.onWriteError);
      return;
    }
    this.pending.push(this.prefix + id, text);
    this.pendingBytes += text.length;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(flushStore, this);
    }
  }

  /** A direct write's failure: logged (at most once per {@link WARN_INTERVAL_MS}), never thrown. */
  private readonly onWriteError = (err: Error): void => this.warn(err, 'response store: write lost');

  /** See {@link ResponseStore.whenReady}: connected, or `timeoutMs` waited, or Redis refused. */
  whenReady(): Promise<void> {
    return this.ready().then(
      () => {},
      () => {},
    );
  }

  /** Sends the queued writes in one pipeline (each `SET key value PX ttl`); failures are logged, never thrown. */
  flush(): Promise<void> {
    this.scheduled = false;
    if (this.pending.length === 0) return this.flushing ?? Promise.resolve();
    const writes = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    const previous = this.flushing ?? Promise.resolve();
    const flushing = previous
      .then(() => this.ready())
      .then((redis) => {
        const pipeline = redis.pipeline();
        for (let i = 0; i < writes.length; i += 2) pipeline.set(writes[i]!, writes[i + 1]!, 'PX', ENTRY_TTL_MS);
        return pipeline.exec();
      })
      .then(
        () => {},
        (err: Error) => this.warn(err, 'response store: writes lost'),
      )
      .finally(() => {
        if (this.flushing === flushing) this.flushing = null;
      });
    this.flushing = flushing;
    return flushing;
  }

  /** See {@link ResponseStore.delete}: `DEL`. */
  async delete(id: string): Promise<boolean> {
    const redis = await this.ready();
    return (await redis.del(this.prefix + id)) > 0;
  }

  /** Sends the queued writes, then quits (or drops a connection not made). */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    if (this.client) await closeRedis(this.client);
  }
}

/** The scheduled flush (a module-level function: no closure per write). */
function flushStore(store: RedisResponseStore): void {
  void store.flush();
}
