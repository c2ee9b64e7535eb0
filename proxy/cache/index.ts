/**
 * The response cache (issue 18): which store a gateway uses (`cache.store`: memory, or Redis shared
 * by every gateway on it), and the turn-taking that serves a full bucket's answers in order.
 * The request side is stages/cache-lookup.ts (the lookup and a hit's answer, ./replay.ts);
 * observers/cache-writer.ts stores a miss's answer.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { CacheConfig } from '../../shared/config.ts';
import { MemoryCacheStore } from './memory.ts';
import { RedisCacheStore } from './redis.ts';
import type { CacheStore } from './types.ts';

export { MemoryCacheStore } from './memory.ts';
export { RedisCacheStore } from './redis.ts';
export type { AnswerToStore, CachedAnswer, CachedBucket, CacheRequest, CacheStore, CacheUsage } from './types.ts';

/** The store `config` names; never connects synchronously (Redis connects in the background). */
export function createCacheStore(config: CacheConfig, logger: Logger | null): CacheStore {
  if (config.store === 'redis' && config.redisUrl) return new RedisCacheStore(config.redisUrl, config.timeoutMs, logger);
  return new MemoryCacheStore(config.maxBytes);
}

/**
 * The next turn of a key's bucket, per process (a full bucket's answers are served in turn; with
 * Redis each gateway keeps its own turns). Bounded: the least recently used keys' turns are dropped.
 */
const turns = new LRUCache<string, number>({ max: 100_000 });

/** The index (0 .. `size` − 1) of the answer to serve now for `key`, advancing its turn. */
export function nextTurn(key: string, size: number): number {
  const t = turns.get(key) ?? 0;
  turns.set(key, t + 1);
  return t % size;
}
