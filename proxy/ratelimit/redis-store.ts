/**
 * The Redis rate-limit store: GCRA over all of a request's buckets in ONE atomic Lua script (run with
 * EVALSHA, falling back to EVAL, via ioredis `defineCommand`), so any number of gateway processes
 * share one budget exactly. The script reads the clock with `redis.call('TIME')`, so the clocks of the
 * gateway hosts do not matter, and stores each TAT with a PX expiry ending at that TAT, rounded up to
 * the next ms (a bucket whose TAT has passed is full, the same as an absent key).
 *
 * Nothing hangs: the client never queues commands while disconnected (`enableOfflineQueue: false`),
 * commands time out after `timeoutMs`, and a check made while the connection is being established
 * waits for it at most `timeoutMs`. Every failure rejects; the caller decides (./store-failure.ts).
 *
 * ioredis (~10-20 MB of RSS) is imported when a store is created, not when this module is: a gateway
 * whose rate-limit store is in-memory never loads it. The store starts loading it and connecting at
 * creation; a check made before the import finished waits for it (a local module load, a few tens
 * of ms) before the connection wait above.
 */
import type { Redis } from 'ioredis';
import { gcra, periodUs, type GcraResult, type GcraState } from './gcra.ts';
import type { Bucket, RateLimitStore } from './store.ts';
import { closeRedis, connectRedis, waitForReady } from '../../shared/redis-client.ts';

/**
 * KEYS: the bucket keys. ARGV[1]: cost; ARGV[2i], ARGV[2i+1]: the period P in whole µs and the
 * capacity C of KEYS[i] (gcra.ts: `periodUs`, `capacity`). The steps are gcra.ts's, on the same
 * integers: the clock is TIME in µs, a TAT is stored as `<µs>:<rem>` (TAT = µs + rem/C µs), T is P
 * ticks of 1/C µs, admitted iff TAT' − now ≤ P µs; a stored TAT more than P ahead of now (TIME
 * stepped back) is a full bucket. A value without ':' is a TAT in ms written by an
 * earlier version of this script: read as its µs rounded up. Returns, as strings:
 * [allAllowed '1'|'0', now (µs), then per key: stored value ('' when absent), allowed '1'|'0'].
 * Numbers are formatted with %.17g so they round-trip exactly (Lua's tostring keeps only 14 digits,
 * and a Lua number returned as a reply would be truncated to an integer).
 */
export const GCRA_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cost = tonumber(ARGV[1])
local n = #KEYS
local out = { '0', string.format('%.17g', now) }
local newUs, newRem = {}, {}
local all = true
for i = 1, n do
  local p = tonumber(ARGV[2 * i])
  local c = tonumber(ARGV[2 * i + 1])
  local raw = redis.call('GET', KEYS[i])
  local tu, tr = nil, 0
  if raw then
    local sep = string.find(raw, ':', 1, true)
    if sep then
      tu = tonumber(string.sub(raw, 1, sep - 1))
      tr = tonumber(string.sub(raw, sep + 1))
    else
      tu = math.ceil(tonumber(raw) * 1000)
    end
  end
  local bu, br = now, 0
  -- a TAT more than P ahead was stored before Redis's clock stepped back: a full bucket, as gcra.ts
  if tu and tu >= now and not (tu - now > p or (tu - now == p and tr > 0)) then bu, br = tu, tr end
  local total = br + math.ceil(p * cost)
  local carry = math.floor(total / c)
  local nu = bu + carry
  local nr = total - carry * c
  local ahead = nu - now
  local ok = ahead < p or (ahead == p and nr == 0)
  if not ok then all = false end
  newUs[i], newRem[i] = nu, nr
  if raw then out[#out + 1] = raw else out[#out + 1] = '' end
  if ok then out[#out + 1] = '1' else out[#out + 1] = '0' end
end
if all then
  for i = 1, n do
    local px = math.floor((newUs[i] - now) / 1000) + 1
    redis.call('SET', KEYS[i], string.format('%.17g', newUs[i]) .. ':' .. string.format('%.17g', newRem[i]), 'PX', px)
  end
  out[1] = '1'
end
return out
`;

/**
 * A stored value as the script reads it (see {@link GCRA_LUA}); `undefined` for an absent key.
 * Redis path only: it allocates the state.
 */
function parseTat(raw: string): GcraState | undefined {
  if (raw === '') return undefined;
  const sep = raw.indexOf(':');
  if (sep < 0) return { us: Math.ceil(Number(raw) * 1000), rem: 0 };
  return { us: Number(raw.slice(0, sep)), rem: Number(raw.slice(sep + 1)) };
}

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /** `redis://[user:pass@]host:port[/db]` or `rediss://…`. */
  url: string;
  /**
   * Command timeout and the longest a check waits for a connection in progress, in ms. ioredis's
   * timer fires in the event loop's timers phase, before a reply already received is read, so it
   * must exceed the proxy's event-loop lag under load (config default 1 s), not Redis's latency.
   */
  timeoutMs: number;
  /** Called on connection-level errors (refused, reset, DNS); the caller throttles logging. */
  onConnectionError?: (err: Error) => void;
}

type GcraCommand = (numKeys: number, ...args: (string | number)[]) => Promise<string[]>;

/** Imports ioredis once (see the module docstring); resolves to its client class. */

/** Redis-backed GCRA store; see the module docstring. */
export class RedisStore implements RateLimitStore {
  private client: Redis | null = null;
  /** Resolves to the client once ioredis is loaded and the client created (it then connects in the background). */
  private readonly clientReady: Promise<Redis>;
  private readonly timeoutMs: number;
  private readyWait: Promise<void> | null = null;
  private closed = false;

  constructor(options: RedisStoreOptions) {
    this.timeoutMs = options.timeoutMs;
    this.clientReady = connectRedis(
      options.url,
      options.timeoutMs,
      (err) => options.onConnectionError?.(err),
      () => this.closed,
      'rate-limit store: redis store closed',
      (redis) => redis.defineCommand('svcGcra', { lua: GCRA_LUA }),
    ).then((redis) => {
      this.client = redis;
      return redis;
    });
    // Failures (ioredis missing, closed first) surface through each check; never unhandled here.
    this.clientReady.catch(() => {});
  }

  /** True while the connection to Redis is up (ioredis status `ready`); false before it first is. */
  get connected(): boolean {
    return this.client?.status === 'ready';
  }

  /** The ioredis client (exposed for tests); null until ioredis is loaded. */
  get redis(): Redis | null {
    return this.client;
  }

  /**
   * Resolves with the client once it is ready; rejects at once when it is not connecting, or after
   * timeoutMs (counted once ioredis is loaded), or when ioredis cannot be loaded.
   */
  private async waitReady(): Promise<Redis> {
    const redis = this.client ?? (await this.clientReady);
    if (redis.status === 'ready') return redis;
    // One wait shared by every request that arrives while the connection is being made.
    this.readyWait ??= waitForReady(redis, this.timeoutMs, 'rate-limit store', this.closed).finally(() => {
      this.readyWait = null;
    });
    await this.readyWait;
    return redis;
  }

  /**
   * See {@link RateLimitStore.checkAll}. `nowMs` is ignored: the script uses the Redis server's clock.
   * @throws rejects when Redis is unreachable, not ready within `timeoutMs`, times out, or errors.
   */
  async checkAll(buckets: readonly Bucket[], cost: number, _nowMs: number): Promise<GcraResult[]> {
    if (!Number.isFinite(cost) || cost < 0) throw new RangeError(`rate limit: cost must be a finite number >= 0, got ${cost}`);
    const redis = await this.waitReady();
    const args: (string | number)[] = new Array(buckets.length + 1 + buckets.length * 2);
    let a = 0;
    for (const b of buckets) args[a++] = b.key;
    args[a++] = cost;
    for (const b of buckets) {
      args[a++] = periodUs(b.limit);
      args[a++] = b.limit.capacity;
    }
    const command = (redis as unknown as { svcGcra: GcraCommand }).svcGcra;
    const reply = await command.call(redis, buckets.length, ...args);
    if (!Array.isArray(reply) || reply.length !== 2 + buckets.length * 2) {
      throw new Error(`rate-limit store: unexpected script reply ${JSON.stringify(reply)}`);
    }
    const nowUs = Number(reply[1]);
    const results: GcraResult[] = new Array(buckets.length);
    for (let i = 0; i < buckets.length; i++) {
      const r = gcra(parseTat(reply[2 + i * 2]!), nowUs, buckets[i]!.limit, cost);
      // The script's verdict is authoritative (same IEEE arithmetic, so they agree in practice).
      const allowed = reply[3 + i * 2] === '1';
      results[i] = r.allowed === allowed ? r : { ...r, allowed, remaining: allowed ? r.remaining : 0, retryAfterMs: allowed ? 0 : Math.max(r.retryAfterMs, 1) };
    }
    return results;
  }

  /**
   * Closes the connection (QUIT when connected, else disconnect) and stops reconnecting; a store
   * closed before ioredis finished loading never creates its client. Never rejects.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.client) await closeRedis(this.client);
  }
}
