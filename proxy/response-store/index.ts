/**
 * The response store a gateway uses (./types.ts says what it keeps and why): Redis when the
 * rate-limit store is Redis (`rate-limit-store.type: redis`, its `url`), so gateway processes share
 * responses; else in memory (bounded: 10,000 made responses in 256 MiB, 100,000 relayed ids).
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../shared/config.ts';
import { MemoryResponseStore } from './memory.ts';
import { RedisResponseStore } from './redis.ts';
import type { ResponseStore } from './types.ts';

export { MemoryResponseStore } from './memory.ts';
export { RedisResponseStore } from './redis.ts';
export { ownEntry, type MadeEntry, type RelayedEntry, type ResponseStore, type StoredEntry } from './types.ts';

/** Redis commands of the response store wait at least this long (ms): a read holds up one request, not every one. */
const MIN_REDIS_TIMEOUT_MS = 2_000;

/**
 * The store for `config`. Never connects synchronously (the Redis client connects in the background).
 * @throws {Error} never for a valid config (a Redis store without a URL is refused by the config itself).
 */
export function createResponseStore(config: GatewayConfig, logger: Logger | null): ResponseStore {
  const rl = config.rateLimit;
  if (rl.store === 'redis' && rl.redisUrl) {
    return new RedisResponseStore({ url: rl.redisUrl, timeoutMs: Math.max(rl.storeTimeoutMs, MIN_REDIS_TIMEOUT_MS) }, logger);
  }
  return new MemoryResponseStore(logger);
}
