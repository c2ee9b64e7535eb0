/**
 * The bounded queue of log records waiting for admin. A record is encoded once when queued (its
 * head serialized, its raw bodies copied beside it: shared/record-batch.ts) and a batch is those
 * bytes concatenated behind a header, sent as one binary message. The queue is bounded by count
 * and by bytes, and when full the oldest waiting records are dropped (and counted). Batches in
 * flight stay owned by the queue until admin acknowledges them (after its commit); a negative ack
 * or a lost link puts them back at the front, so nothing is lost short of the bounds, and admin's
 * duplicate handling makes a re-sent record harmless.
 */
import { randomUUID } from 'node:crypto';
import { encodeBatch, encodeRecord } from '../shared/record-batch.ts';

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

/**
 * The queue. `send` is called with a batch message (shared/record-batch.ts, to be sent as one
 * binary WebSocket message); it returns false when the link is down.
 */
export class LogQueue {
  private waiting: Buffer[] = [];
  private head = 0;
  private waitingBytes = 0;
  private readonly inFlight = new Map<string, Buffer[]>();
  private stats = { sent: 0, acknowledged: 0, dropped: 0, unserializable: 0, nacked: 0 };
  private drainWaiters: Array<() => void> = [];
  /** Backoff after negative acks: no batch is sent before `retryAt` (epoch ms). */
  private nackDelayMs = 0;
  private retryAt = 0;

  constructor(
    private readonly options: LogQueueOptions,
    private readonly send: (message: Buffer) => boolean,
  ) {}

  /**
   * Queues a record; drops the oldest waiting records when a bound is reached. A record that cannot
   * be serialized is dropped (and counted) rather than thrown to the caller.
   * @param head the record without the bodies given raw (serialized here with JSON.stringify).
   * @param requestBody the client's body as received, valid JSON, logged as these bytes; null: the
   *   head's `requestBody` stands.
   * @param responseBody the provider's non-streamed body as it reached the client (unchecked;
   *   admin parses it); null: the head's `responseBody` stands.
   */
  push(head: object, requestBody: Buffer | null = null, responseBody: Buffer | null = null): void {
    let entry: Buffer;
    try {
      const json = JSON.stringify(head);
      if (typeof json !== 'string' || json[0] !== '{') throw new TypeError('a log record must be a JSON object');
      entry = encodeRecord(json, requestBody, responseBody);
    } catch {
      this.stats.dropped++;
      this.stats.unserializable++;
      return;
    }
    this.waiting.push(entry);
    this.waitingBytes += entry.length;
    this.enforceBounds();
  }

  /** Drops the oldest waiting records while a bound is exceeded (the newest record always stays). */
  private enforceBounds(): void {
    while (this.size() > this.options.maxRecords || (this.waitingBytes > this.options.maxBytes && this.size() > 1)) {
      const dropped = this.waiting[this.head++]!;
      this.waitingBytes -= dropped.length;
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

  /**
   * Sends as many batches as the in-flight bound allows. Call on a timer and when the link opens.
   * @param fullOnly send only full batches (`batchSize` records, or `maxBatchBytes`): after an
   *   ack, so that under load batches stay large (admin's cost is mostly per batch) and the
   *   timer sends the rest within `flushIntervalMs`.
   */
  flush(fullOnly = false): void {
    const maxInFlight = this.options.maxInFlight ?? 4;
    const maxBatchBytes = this.options.maxBatchBytes ?? 16 * 1024 * 1024;
    if (this.retryAt > Date.now()) return;
    while (this.size() > 0 && this.inFlight.size < maxInFlight) {
      const last = Math.min(this.waiting.length, this.head + this.options.batchSize);
      let end = this.head + 1;
      let bytes = this.waiting[this.head]!.length;
      for (; end < last && bytes + this.waiting[end]!.length <= maxBatchBytes; end++) bytes += this.waiting[end]!.length;
      if (fullOnly && end - this.head < this.options.batchSize && end === this.waiting.length) break;
      const batch = this.waiting.slice(this.head, end);
      const batchId = randomUUID();
      if (!this.send(encodeBatch(batchId, batch))) return;
      this.head = end;
      this.waitingBytes -= bytes;
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

  private requeue(batch: Buffer[]): void {
    this.waiting = batch.concat(this.waiting.slice(this.head));
    this.head = 0;
    for (const e of batch) this.waitingBytes += e.length;
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
