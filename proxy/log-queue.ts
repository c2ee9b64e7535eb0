/**
 * The bounded queue of log records waiting for admin. Records are serialized once when queued;
 * the queue is bounded by count and by bytes, and when full the oldest waiting records are
 * dropped (and counted). Batches in flight stay owned by the queue until admin acknowledges them
 * (after its commit); a negative ack or a lost link puts them back at the front, so nothing is lost
 * short of the bounds, and admin's `on conflict do nothing` makes a re-sent record harmless.
 */
import { randomUUID } from 'node:crypto';

interface Entry {
  json: string;
  bytes: number;
}

/**
 * `JSON.stringify(record)` with `rawMembers` appended as members whose values are JSON texts used
 * as they are: a body the proxy received as JSON is logged without being serialized a second time
 * (for a 100 kB chat history that is the larger part of the record's cost). Each raw text must be
 * one valid JSON value and its member absent from `record` (or `undefined` there).
 * @returns the record's JSON text.
 * @throws {TypeError} when `record` cannot be serialized (a cycle, a BigInt) or is not an object.
 */
export function serializeRecord(record: object, rawMembers: ReadonlyArray<readonly [name: string, json: string]>): string {
  const json = JSON.stringify(record);
  if (typeof json !== 'string' || json[0] !== '{') throw new TypeError('a log record must be a JSON object');
  if (rawMembers.length === 0) return json;
  let tail = '';
  for (const [name, value] of rawMembers) tail += `,${JSON.stringify(name)}:${value}`;
  // `{}` has no member for the first raw one to follow.
  return json.length === 2 ? `{${tail.slice(1)}}` : `${json.slice(0, -1)}${tail}}`;
}

/** Bounds and batching of the queue. */
export interface LogQueueOptions {
  maxRecords: number;
  maxBytes: number;
  batchSize: number;
  /** Most unacknowledged batches at once. Default 4. */
  maxInFlight?: number;
  /** Most bytes of records in one batch message (a batch always holds at least one record). Default 16 MiB. */
  maxBatchBytes?: number;
}

/** After a negative ack, sending pauses this long, doubling per further nack up to the cap (ms). */
const NACK_BACKOFF_START_MS = 250;
const NACK_BACKOFF_CAP_MS = 30_000;

/** Counters for /health and /metrics. */
export interface LogQueueStats {
  queued: number;
  queuedBytes: number;
  inFlight: number;
  sent: number;
  acknowledged: number;
  /** Records dropped because the queue was full (oldest first) or the record could not be serialized. */
  dropped: number;
  /** Of `dropped`: records that could not be serialized. */
  unserializable: number;
  /** Batches admin failed to store and that were queued again. */
  nacked: number;
}

/** The queue. `send` is called with a batch message (JSON text); it returns false when the link is down. */
export class LogQueue {
  private waiting: Entry[] = [];
  private head = 0;
  private waitingBytes = 0;
  private readonly inFlight = new Map<string, Entry[]>();
  private stats = { sent: 0, acknowledged: 0, dropped: 0, unserializable: 0, nacked: 0 };
  private drainWaiters: Array<() => void> = [];
  /** Backoff after negative acks: no batch is sent before `retryAt` (epoch ms). */
  private nackDelayMs = 0;
  private retryAt = 0;

  constructor(
    private readonly options: LogQueueOptions,
    private readonly send: (message: string) => boolean,
  ) {}

  /**
   * Queues a record (a JSON object); drops the oldest waiting records when a bound is reached. A
   * record that cannot be serialized is dropped (and counted) rather than thrown to the caller.
   * @param rawMembers members already serialized, appended as they are (see {@link serializeRecord}).
   */
  push(record: object, rawMembers: ReadonlyArray<readonly [name: string, json: string]> = []): void {
    let json: string;
    try {
      json = serializeRecord(record, rawMembers);
    } catch {
      this.stats.dropped++;
      this.stats.unserializable++;
      return;
    }
    const bytes = Buffer.byteLength(json);
    this.waiting.push({ json, bytes });
    this.waitingBytes += bytes;
    this.enforceBounds();
  }

  /** Drops the oldest waiting records while a bound is exceeded (the newest record always stays). */
  private enforceBounds(): void {
    while (this.size() > this.options.maxRecords || (this.waitingBytes > this.options.maxBytes && this.size() > 1)) {
      const dropped = this.waiting[this.head++]!;
      this.waitingBytes -= dropped.bytes;
      this.stats.dropped++;
    }
    this.compact();
  }

  private size(): number {
    return this.waiting.length - this.head;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.waiting.length) {
      this.waiting = this.waiting.slice(this.head);
      this.head = 0;
    }
  }

  /** Sends as many batches as the in-flight bound allows. Call on a timer and when the link opens. */
  flush(): void {
    const maxInFlight = this.options.maxInFlight ?? 4;
    const maxBatchBytes = this.options.maxBatchBytes ?? 16 * 1024 * 1024;
    if (this.retryAt > Date.now()) return;
    while (this.size() > 0 && this.inFlight.size < maxInFlight) {
      const last = Math.min(this.waiting.length, this.head + this.options.batchSize);
      let end = this.head + 1;
      for (let bytes = this.waiting[this.head]!.bytes; end < last && bytes + this.waiting[end]!.bytes <= maxBatchBytes; end++) bytes += this.waiting[end]!.bytes;
      const batch = this.waiting.slice(this.head, end);
      const batchId = randomUUID();
      const message = `{"type":"records","batchId":"${batchId}","records":[${batch.map((e) => e.json).join(',')}]}`;
      if (!this.send(message)) return;
      this.head = end;
      for (const e of batch) this.waitingBytes -= e.bytes;
      this.inFlight.set(batchId, batch);
      this.stats.sent += batch.length;
    }
    this.compact();
    this.checkDrained();
  }

  /** Admin stored a batch: forget it. */
  ack(batchId: string): void {
    const batch = this.inFlight.get(batchId);
    if (!batch) return;
    this.inFlight.delete(batchId);
    this.nackDelayMs = 0;
    this.stats.acknowledged += batch.length;
    this.checkDrained();
  }

  /** Admin failed to store a batch: put it back at the front, and back off before sending again. */
  nack(batchId: string): void {
    const batch = this.inFlight.get(batchId);
    if (!batch) return;
    this.inFlight.delete(batchId);
    this.stats.nacked++;
    this.nackDelayMs = Math.min(NACK_BACKOFF_CAP_MS, Math.max(NACK_BACKOFF_START_MS, this.nackDelayMs * 2));
    this.retryAt = Date.now() + this.nackDelayMs;
    this.requeue(batch);
  }

  /** The link dropped: every unacknowledged batch goes back to the front, oldest first. */
  linkLost(): void {
    const batches = [...this.inFlight.values()];
    this.inFlight.clear();
    for (let i = batches.length - 1; i >= 0; i--) this.requeue(batches[i]!);
  }

  private requeue(batch: Entry[]): void {
    this.waiting = batch.concat(this.waiting.slice(this.head));
    this.head = 0;
    for (const e of batch) this.waitingBytes += e.bytes;
    this.enforceBounds();
  }

  private checkDrained(): void {
    if (this.size() === 0 && this.inFlight.size === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves when every queued record is acknowledged, or after `timeoutMs` (false then). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.size() === 0 && this.inFlight.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Current counters. */
  getStats(): LogQueueStats {
    let inFlight = 0;
    for (const b of this.inFlight.values()) inFlight += b.length;
    return { queued: this.size(), queuedBytes: this.waitingBytes, inFlight, ...this.stats };
  }
}
