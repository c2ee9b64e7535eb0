/**
 * One way the proxy connects to Redis (the rate-limit store and the response store): ioredis
 * (~10-20 MB of RSS) is imported on first use, not at start, and the client fails fast rather than
 * queue: a command waits at most `timeoutMs`, nothing is queued while disconnected, and the client
 * reconnects forever with a backoff capped at 2 s.
 */
import type { Redis } from 'ioredis';
import { loadOnce } from './lazy.ts';

const loadIoredis = loadOnce(() => import('ioredis').then((mod) => mod.Redis));

/**
 * Loads ioredis (once per process) and starts connecting a client to `url`
 * (`redis://[user:pass@]host:port[/db]` or `rediss://…`); `timeoutMs` bounds the connect (at least
 * 1 s), each command and the wait for a dead socket on close (ms). Connection errors go to
 * `onError`, never unhandled; `prepare` runs before connecting (e.g. to define Lua commands).
 * @throws (the promise rejects) when ioredis cannot be loaded, or with `closedError` when
 *   `isClosed()` is true once it is loaded (the store was closed meanwhile: no client is made).
 */
export async function connectRedis(
  url: string,
  timeoutMs: number,
  onError: (err: Error) => void,
  isClosed: () => boolean,
  closedError: string,
  prepare?: (redis: Redis) => void,
): Promise<Redis> {
  const RedisClient = await loadIoredis();
  if (isClosed()) throw new Error(closedError);
  const redis = new RedisClient(url, {
    lazyConnect: true,
    connectTimeout: Math.max(timeoutMs, 1000),
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    // On close(), ioredis waits this long for a socket that already died (refused) to emit 'close',
    // keeping the process alive; the default is 2 s.
    disconnectTimeout: timeoutMs,
    // Reconnect forever with a capped backoff; commands fail fast meanwhile.
    retryStrategy: (times) => Math.min(times * 100, 2000),
  });
  redis.on('error', onError);
  prepare?.(redis);
  redis.connect().catch(() => {
    /* reported through the 'error' event; ioredis keeps reconnecting */
  });
  return redis;
}

/**
 * Waits for `redis` to become ready: resolves at once when it is, else on its `ready` event.
 * @throws (rejects) `<what>: redis not connected (status …)` when it is neither ready nor
 *   connecting (or `closed` is true); `<what>: redis connection closed` when the connection closes
 *   first; `<what>: redis not ready within <timeoutMs> ms` after `timeoutMs` (ms).
 */
export function waitForReady(redis: Redis, timeoutMs: number, what: string, closed = false): Promise<void> {
  const status = redis.status;
  if (status === 'ready') return Promise.resolve();
  if (closed || (status !== 'wait' && status !== 'connecting' && status !== 'connect')) {
    return Promise.reject(new Error(`${what}: redis not connected (status ${status})`));
  }
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onClose = () => done(new Error(`${what}: redis connection closed`));
    const timer = setTimeout(() => done(new Error(`${what}: redis not ready within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    redis.once('ready', onReady);
    redis.once('close', onClose);
  });
}

/** Closes `redis`: QUIT when connected, else (or when QUIT fails) disconnect. Never rejects. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    try {
      await redis.quit();
      return;
    } catch {
      /* fall through */
    }
  }
  redis.disconnect();
}
