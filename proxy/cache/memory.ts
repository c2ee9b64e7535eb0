/**
 * The in-memory cache store: one process's answers in an lru-cache bounded by bytes (`cache.max-size`),
 * the least recently used bucket evicted first; each bucket expires `ttlMs` after its last answer was
 * added. Reads are synchronous, so a hit costs no promise.
 */
import { LRUCache } from 'lru-cache';
import type { CachedAnswer, CacheStore } from './types.ts';

/** Bytes counted per answer besides its body (the object, its id and content type). */
const ANSWER_OVERHEAD = 256;

/** See the module comment. */
export class MemoryCacheStore implements CacheStore {
  readonly name = 'memory';
  private readonly lru: LRUCache<string, CachedAnswer[]>;

  /** @param maxBytes the bound on all buckets' bytes (bodies plus {@link ANSWER_OVERHEAD} each). */
  constructor(maxBytes: number) {
    this.lru = new LRUCache<string, CachedAnswer[]>({
      maxSize: maxBytes,
      // Each body's whole backing store: a body may be a view into the socket read it arrived in
      // (observers/cache-writer.ts), which it keeps.
      sizeCalculation: (bucket) => bucket.reduce((n, a) => n + a.body.buffer.byteLength + ANSWER_OVERHEAD, 0),
      ttlAutopurge: false,
    });
  }

  /** See {@link CacheStore.get}: synchronous. */
  get(key: string): CachedAnswer[] | null {
    return this.lru.get(key) ?? null;
  }

  /** See {@link CacheStore.add}: a new array each time, so lru-cache counts the bucket's new size. */
  add(key: string, answer: CachedAnswer, ttlMs: number, bucketMax: number): void {
    // peek: the set below makes the key the most recently used anyway.
    const bucket = this.lru.peek(key) ?? [];
    if (bucket.length >= bucketMax) return;
    this.lru.set(key, [...bucket, answer], { ttl: ttlMs });
  }

  /** See {@link CacheStore.whenReady}: at once (nothing to connect). */
  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  /** Drops every answer. */
  async close(): Promise<void> {
    this.lru.clear();
  }
}
