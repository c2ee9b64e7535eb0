/**
 * The in-memory cache store: one process's answers as bytes in one arena of `cache.max-size` bytes
 * (./arena-entry.ts), used as a ring: each bucket is written at the head as one entry, and room is
 * made at the tail. A `Map` from 30 bits of the key (a small integer) to the entry's offset finds it;
 * of two keys sharing those bits the later added is kept. Nothing per answer lives on V8's heap but
 * that map's slot, so a full cache costs the collector nothing.
 *
 * Eviction is CLOCK (F. J. Corbató, "A Paging Experiment with the Multics System", 1968), the usual
 * approximation of least-recently-used: an entry reaching the tail is dropped, unless it was read
 * since it was written or last moved; then it is moved to the head once and its mark cleared. A
 * bucket that grows (`Svc-Cache-Bucket-Max-Size` > 1) is written anew with its older answers and
 * the new one; its old entry is dead from then on and is skipped when the tail reaches it. A bucket
 * expires `ttlMs` after its last answer was added. Reads and writes are synchronous: a hit costs no
 * promise. The answer a hit serves is copied out, so a slow client's replay never sees the arena
 * rewritten under it.
 */
import { answersAt, countAt, entrySize, expiryAt, keyIs, keyNumber, keyNumberAt, markRead, readAnswer, sizeAt, usageText, wasRead, writeEntry } from './arena-entry.ts';
import type { AnswerToStore, CachedAnswer, CachedBucket, CacheStore, CacheUsage } from './types.ts';

/** See the module comment. */
export class MemoryCacheStore implements CacheStore {
  readonly name = 'memory';
  /** The arena's bytes (a multiple of 8). */
  private capacity: number;
  /** Allocated at the first write, so a gateway that caches nothing reserves nothing. */
  private arena: Buffer | null = null;
  /** A key's number ({@link keyNumber}) → its live entry's offset. */
  private readonly index = new Map<number, number>();
  /** Where the next entry goes. */
  private head = 0;
  /** The oldest entry. */
  private tail = 0;
  /** Wrapped: entries fill [tail, end) and [0, head), free room is [head, tail). Else entries fill [tail, head). */
  private wrapped = false;
  /** Where entries stop before the ring wrapped (the room after it is unused). */
  private end = 0;
  /** Bytes of the entries the index holds (dead entries not yet reached by the tail excluded). */
  private liveBytes = 0;

  /** @param maxBytes the arena's size: every bucket's bytes, heads included, fit in it (at most 4 GiB). */
  constructor(maxBytes: number) {
    // A multiple of 8 below 2³² (an entry's size is a u32); arithmetic, as bitwise ops are 32-bit.
    const bytes = Math.min(maxBytes, 2 ** 32 - 8);
    this.capacity = bytes - (bytes % 8);
  }

  /** See {@link CacheStore.get}: synchronous; an answer asked of the bucket is decoded then, its body a copy. */
  get(key: string): CachedBucket | null {
    const arena = this.arena;
    const at = this.live(keyNumber(key), key);
    if (arena === null || at < 0) return null;
    markRead(arena, at);
    return new ArenaBucket(arena, at, countAt(arena, at));
  }

  /** See {@link CacheStore.add}: the bucket is written anew at the head; an answer larger than the arena is not kept. */
  add(key: string, answer: AnswerToStore, ttlMs: number, bucketMax: number, replace = false): void {
    const id = keyNumber(key);
    const at = this.live(id, key);
    let older: Buffer | null = null;
    let count = 0;
    // Replacing: the old entry goes now, kept or not the new answer (it may be too large to keep).
    if (at >= 0 && replace) this.forget(id, at);
    else if (at >= 0) {
      count = countAt(this.arena!, at);
      if (count >= bucketMax) return;
      // A copy: making room below may overwrite the old entry, dead once the index forgets it.
      older = Buffer.from(answersAt(this.arena!, at));
    }
    const usage = usageText(answer);
    const size = entrySize(key, older, answer, usage);
    if (size < 0 || size > this.capacity) return;
    // The key's old entry (or another key's sharing its number) is dead from here on.
    const held = this.index.get(id);
    if (held !== undefined) this.forget(id, held);
    const arena = this.arena ?? this.allocate();
    if (arena === null) return;
    const to = this.reserve(arena, size);
    writeEntry(arena, to, size, key, Date.now() + ttlMs, older, count, answer, usage);
    this.head = to + size;
    this.index.set(id, to);
    this.liveBytes += size;
  }

  /** See {@link CacheStore.usage}. */
  usage(): CacheUsage {
    return { buckets: this.index.size, bytes: this.liveBytes, maxBytes: this.capacity };
  }

  /** Drops the index's entry `id` → `at` (the entry's bytes stay until the tail reaches them). */
  private forget(id: number, at: number): void {
    this.index.delete(id);
    this.liveBytes -= sizeAt(this.arena!, at);
  }

  /** The arena, allocated now; null (and nothing is ever kept) when the process cannot have it. */
  private allocate(): Buffer | null {
    try {
      return (this.arena = Buffer.allocUnsafeSlow(this.capacity));
    } catch {
      // Out of memory: caching is an optimisation, so the gateway answers every request as a miss.
      this.capacity = 0;
      return null;
    }
  }

  /** The offset of `key`'s entry (`id`: its {@link keyNumber}) when it holds `key` and has not expired, else -1 (an expired one is forgotten). */
  private live(id: number, key: string): number {
    const arena = this.arena;
    if (arena === null) return -1;
    const at = this.index.get(id);
    if (at === undefined || !keyIs(arena, at, key)) return -1;
    if (expiryAt(arena, at) > Date.now()) return at;
    this.forget(id, at);
    return -1;
  }

  /** The offset of `size` free bytes at the head, made by wrapping and taking entries off the tail. */
  private reserve(arena: Buffer, size: number): number {
    for (;;) {
      if (this.wrapped) {
        if (this.tail - this.head >= size) return this.head;
        this.takeTail(arena);
      } else if (this.capacity - this.head >= size) {
        return this.head;
      } else if (this.tail === this.head) {
        this.tail = this.head = 0;
      } else {
        this.end = this.head;
        this.head = 0;
        this.wrapped = true;
      }
    }
  }

  /** Takes the oldest entry off the tail (wrapped ring only): dropped, or moved to the head once if read meanwhile. */
  private takeTail(arena: Buffer): void {
    const at = this.tail;
    const size = sizeAt(arena, at);
    this.tail = at + size;
    if (this.tail === this.end) {
      this.tail = 0;
      this.wrapped = false;
    }
    const id = keyNumberAt(arena, at);
    if (this.index.get(id) !== at) return;
    if (wasRead(arena, at, true) && expiryAt(arena, at) > Date.now()) {
      // The head is at or before `at` and the entry ends at or before the old `end`: the move fits.
      arena.copyWithin(this.head, at, at + size);
      this.index.set(id, this.head);
      this.head += size;
    } else this.forget(id, at);
  }

  /** See {@link CacheStore.whenReady}: at once (nothing to connect). */
  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  /** Drops every answer and the arena. */
  async close(): Promise<void> {
    this.index.clear();
    this.liveBytes = 0;
    this.arena = null;
    this.head = this.tail = this.end = 0;
    this.wrapped = false;
  }
}

/** A bucket read in place: valid until the store is next written (see {@link CachedBucket.answer}). */
class ArenaBucket implements CachedBucket {
  constructor(
    private readonly arena: Buffer,
    private readonly at: number,
    readonly size: number,
  ) {}

  /** See {@link CachedBucket.answer}. */
  answer(index: number): CachedAnswer {
    return readAnswer(this.arena, this.at, index);
  }
}
