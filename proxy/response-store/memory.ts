/**
 * The in-memory response store: one process's entries in LRUs (lru-cache), expiring after
 * {@link ENTRY_TTL_MS}. A made response is kept as its JSON text (so what a caller reads is a fresh
 * copy, and its size is exact); a relayed id's entry (three strings, one per passthrough answer) is
 * kept as the frozen object it is, which spares every passthrough answer a stringify. The responses
 * the gateway made (whole conversations) and the ids it relayed (a provider's name each) are bounded
 * apart, so heavy passthrough traffic never evicts the conversations only the gateway holds. Used
 * unless the rate-limit store is Redis; entries are lost on restart and not shared between gateway
 * processes.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { ENTRY_TTL_MS, MAX_ENTRY_BYTES, type RelayedEntry, type ResponseStore, type StoredEntry } from './types.ts';

/** Bounds of a {@link MemoryResponseStore}. */
export interface MemoryStoreOptions {
  /** Most made responses kept (default 10,000). */
  maxEntries?: number;
  /** Most relayed ids kept (default 100,000; about 100 bytes each). */
  maxRelayed?: number;
  /** Most bytes of entry JSON kept (default 256 MiB); the least recently used go first. */
  maxBytes?: number;
  /** Largest single entry (default {@link MAX_ENTRY_BYTES}). */
  maxEntryBytes?: number;
}

/** See the module comment. */
export class MemoryResponseStore implements ResponseStore {
  readonly name = 'memory';
  private readonly entries: LRUCache<string, string>;
  private readonly relayed: LRUCache<string, Readonly<RelayedEntry>>;
  private readonly maxEntryBytes: number;

  constructor(
    private readonly logger: Logger | null,
    options: MemoryStoreOptions = {},
  ) {
    this.maxEntryBytes = options.maxEntryBytes ?? MAX_ENTRY_BYTES;
    this.entries = new LRUCache<string, string>({
      max: options.maxEntries ?? 10_000,
      maxSize: options.maxBytes ?? 256 * 1024 * 1024,
      maxEntrySize: this.maxEntryBytes,
      // UTF-16 length: close enough to the bytes held, and free to compute.
      sizeCalculation: (text) => Math.max(1, text.length),
      ttl: ENTRY_TTL_MS,
    });
    this.relayed = new LRUCache<string, Readonly<RelayedEntry>>({ max: options.maxRelayed ?? 100_000, ttl: ENTRY_TTL_MS });
  }

  /** See {@link ResponseStore.get}: synchronous; a made entry is a fresh copy, a relayed one the frozen entry kept. */
  get(id: string): StoredEntry | null {
    const text = this.entries.get(id);
    if (text !== undefined) return JSON.parse(text) as StoredEntry;
    return this.relayed.get(id) ?? null;
  }

  /** See {@link ResponseStore.put}: an entry over the largest size is logged and not kept. */
  put(id: string, entry: StoredEntry): void {
    // One place per id: a made entry replaces a relayed one of the same id, and the other way round.
    if (entry.kind === 'relayed') {
      this.entries.delete(id);
      this.relayed.set(id, Object.freeze({ kind: 'relayed', org: entry.org, provider: entry.provider }));
      return;
    }
    const text = JSON.stringify(entry);
    if (text.length > this.maxEntryBytes) {
      this.logger?.warn({ responseId: id, bytes: text.length, limit: this.maxEntryBytes }, 'response store: response too large to keep');
      return;
    }
    this.relayed.delete(id);
    this.entries.set(id, text);
  }

  /** See {@link ResponseStore.delete}: synchronous. */
  delete(id: string): boolean {
    const made = this.entries.delete(id);
    return this.relayed.delete(id) || made;
  }

  /** See {@link ResponseStore.whenReady}: always ready. */
  whenReady(): Promise<void> {
    return Promise.resolve();
  }

  /** Drops every entry. */
  async close(): Promise<void> {
    this.entries.clear();
    this.relayed.clear();
  }
}
