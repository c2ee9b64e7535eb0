/**
 * The bounded queue of log records waiting for admin. A record's head is serialized once when
 * queued and written, with its raw bodies, straight into the batch it joins (./log-batch.ts): a
 * batch is its own message, written in place, and goes out as one binary message
 * (shared/record-batch.ts). The queue is bounded by count and by bytes of records, and when full
 * the oldest waiting records are dropped (and counted). Batches in flight stay owned by the queue
 * until admin acknowledges them (after its commit); a negative ack or a lost link puts them back at
 * the front, so nothing is lost short of the bounds, and admin's duplicate handling makes a re-sent
 * record harmless.
 *
 * No message exceeds admin's bound ({@link MAX_CONTROL_PLANE_MESSAGE_BYTES}; admin closes the link
 * with 1009 on a larger one): a record that cannot fit a message of its own has its bodies cut to fit
 * (marked `bodyTruncated`; only a head too large on its own is dropped, counted in `dropped` and
 * `oversize`), and should admin still refuse a batch as too big (an admin
 * of another version with a smaller bound), {@link LogQueue.linkLost} drops the largest batch in
 * flight rather than re-sending it on every new link.
 */
import { randomUUID } from 'node:crypto';
import { MAX_CONTROL_PLANE_MESSAGE_BYTES } from '../shared/controlplane.ts';
import { BATCH_HEADER_BYTES, recordSize } from '../shared/record-batch.ts';
import { HEAD_MEMBERS } from '../shared/record-head.ts';
import { LogBatch } from './log-batch.ts';

/** Bounds and batching of the queue. */
export interface LogQueueOptions {
  /** Most records waiting (not yet sent); past it the oldest are dropped. */
  maxRecords: number;
  /** Most bytes of records waiting; past it the oldest are dropped (the newest record always stays). */
  maxBytes: number;
  /** Most records in one batch. */
  batchSize: number;
  /** Most unacknowledged batches at once. Default 4. */
  maxInFlight?: number;
  /**
   * Most bytes of records in one batch message (a batch always holds at least one record). Default
   * 16 MiB; at most what fits admin's bound ({@link MAX_CONTROL_PLANE_MESSAGE_BYTES}) with the header. A batch also closes when its buffer is full (./log-batch.ts, 1 MiB; a larger record
   * travels alone in a buffer of its own size).
   */
  maxBatchBytes?: number;
}

/** Default of {@link LogQueueOptions}' `maxBatchBytes`. */
const DEFAULT_MAX_BATCH_BYTES = 16 * 1024 * 1024;
/** Most bytes of records in one message admin accepts: its bound less the batch header. */
const MAX_RECORD_BYTES = MAX_CONTROL_PLANE_MESSAGE_BYTES - BATCH_HEADER_BYTES;

/** Position of `bodyTruncated` in a positional head (shared/record-head.ts). */
const BODY_TRUNCATED = HEAD_MEMBERS.indexOf('bodyTruncated');

/**
 * A record too large for one message with its bodies cut so that head and bodies take at most `room` bytes: the
 * request body first (a raw body as large as `server.max-body-size` allows, which may exceed the message bound),
 * then the response body; the head marked `bodyTruncated` (admin stores a cut body as `{raw: text}`, as it does a
 * refused body cut at `log-queue.max-body-bytes`).
 * @returns the head's JSON text and the cut bodies, or null when the head alone does not fit.
 */
function cutBodiesToFit(head: object, room: number, requestBody: Buffer | null, responseBody: Buffer | null): [string, Buffer | null, Buffer | null] | null {
  if (Array.isArray(head)) head[BODY_TRUNCATED] = true;
  else (head as { bodyTruncated?: boolean }).bodyTruncated = true;
  const json = JSON.stringify(head);
  let left = room - Buffer.byteLength(json);
  if (left < 0) return null;
  const response = responseBody === null ? null : responseBody.subarray(0, Math.min(responseBody.length, left));
  left -= response?.length ?? 0;
  const request = requestBody === null ? null : requestBody.subarray(0, Math.min(requestBody.length, left));
  return [json, request, response];
}

/** After a negative ack, sending pauses this long, doubling per further nack up to the cap (ms). */
const NACK_BACKOFF_START_MS = 250;
const NACK_BACKOFF_CAP_MS = 30_000;

/** Counters for /health and /metrics. */
export interface LogQueueStats {
  queued: number;
  /** Bytes of the waiting records. */
  queuedBytes: number;
  /** Bytes of memory the waiting and unacknowledged batches hold (their buffers). */
  bufferBytes: number;
  inFlight: number;
  sent: number;
  acknowledged: number;
  /** Records dropped because the queue was full (oldest first) or the record could not be serialized. */
  dropped: number;
  /** Of `dropped`: records that could not be serialized. */
  unserializable: number;
  /**
   * Of `dropped`: records too large for one message admin accepts (a record above the bound, or a
   * batch admin refused as too big, code 1009).
   */
  oversize: number;
  /** Batches admin failed to store and that were queued again. */
  nacked: number;
}

/**
 * The queue. `send` is called with a batch message (shared/record-batch.ts, to be sent as one
 * binary WebSocket message; a view of the batch's buffer, valid until admin acknowledges the batch,
 * so it must be written or copied before returning); it returns false when the link is down.
 */
export class LogQueue {
  /** Batches not yet sent, oldest first; the last one may still be taking records. */
  private waiting: LogBatch[] = [];
  private waitingRecords = 0;
  private waitingBytes = 0;
  private readonly inFlight = new Map<string, LogBatch>();
  private stats = { sent: 0, acknowledged: 0, dropped: 0, unserializable: 0, oversize: 0, nacked: 0 };
  private drainWaiters: Array<() => void> = [];
  /** Backoff after negative acks: no batch is sent before `retryAt` (epoch ms). */
  private nackDelayMs = 0;
  private retryAt = 0;
  private readonly maxBatchBytes: number;

  constructor(
    private readonly options: LogQueueOptions,
    private readonly send: (message: Buffer) => boolean,
  ) {
    this.maxBatchBytes = Math.min(options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES, MAX_RECORD_BYTES);
  }

  /**
   * Queues a record; drops the oldest waiting records when a bound is reached. A record that cannot
   * be serialized, or that is too large for one message admin accepts, is dropped (and counted)
   * rather than thrown to the caller.
   * @param head the record without the bodies given raw: its positional head (shared/record-head.ts),
   *   or a record object; serialized here with JSON.stringify.
   * @param requestBody the client's body as received, valid JSON, logged as these bytes; null: the
   *   head's `requestBody` stands.
   * @param responseBody the provider's non-streamed body as it reached the client (unchecked;
   *   admin parses it); null: the head's `responseBody` stands.
   */
  push(head: object, requestBody: Buffer | null = null, responseBody: Buffer | null = null): void {
    let json: string;
    try {
      json = JSON.stringify(head);
      if (typeof json !== 'string' || (json[0] !== '[' && json[0] !== '{')) throw new TypeError('a log record head must be a JSON array or object');
    } catch {
      this.stats.dropped++;
      this.stats.unserializable++;
      return;
    }
    let headBytes = Buffer.byteLength(json);
    let size = recordSize(headBytes, requestBody, responseBody);
    if (size > MAX_RECORD_BYTES) {
      // Admin would close the link on its batch: the bodies are cut to fit (the record kept, marked), and only a
      // head too large on its own is dropped.
      const room = MAX_RECORD_BYTES - recordSize(0, null, null);
      const cut = cutBodiesToFit(head, room, requestBody, responseBody);
      if (cut === null) {
        this.stats.dropped++;
        this.stats.oversize++;
        return;
      }
      [json, requestBody, responseBody] = cut;
      headBytes = Buffer.byteLength(json);
      size = recordSize(headBytes, requestBody, responseBody);
    }
    this.batchFor(size).add(json, headBytes, requestBody, responseBody);
    this.waitingRecords++;
    this.waitingBytes += size;
    this.enforceBounds();
  }

  /** The open batch a record of `size` bytes joins: the newest, unless it is full; else a new one. */
  private batchFor(size: number): LogBatch {
    const last = this.waiting[this.waiting.length - 1];
    if (last !== undefined && !last.closed) {
      const full = last.count >= this.options.batchSize || last.bytes + size > this.maxBatchBytes || !last.fits(size);
      if (!full) return last;
      last.closed = true;
      // It waits behind another full batch: keep only its bytes while the backlog lasts.
      if (this.waiting.length > 1) last.shrink();
    }
    const batch = LogBatch.open(size);
    this.waiting.push(batch);
    return batch;
  }

  /** Drops the oldest waiting records while a bound is exceeded (the newest record always stays). */
  private enforceBounds(): void {
    while (this.waitingRecords > this.options.maxRecords || (this.waitingBytes > this.options.maxBytes && this.waitingRecords > 1)) {
      const oldest = this.waiting[0]!;
      this.waitingBytes -= oldest.dropOldest();
      this.waitingRecords--;
      this.stats.dropped++;
      if (oldest.count === 0) {
        this.waiting.shift();
        oldest.release();
      }
    }
  }

  /**
   * Sends as many batches as the in-flight bound allows. Call on a timer and when the link opens.
   * @param fullOnly send only full batches (`batchSize` records, or as many bytes as a batch
   *   takes): after an ack, so that under load batches stay large (admin's cost is mostly per
   *   batch) and the timer sends the rest within `flushIntervalMs`.
   */
  flush(fullOnly = false): void {
    const maxInFlight = this.options.maxInFlight ?? 4;
    if (this.retryAt > Date.now()) return;
    while (this.waiting.length > 0 && this.inFlight.size < maxInFlight) {
      const batch = this.waiting[0]!;
      if (fullOnly && !batch.closed) break;
      const batchId = randomUUID();
      if (!this.send(batch.message(batchId))) return;
      batch.closed = true;
      this.waiting.shift();
      this.waitingRecords -= batch.count;
      this.waitingBytes -= batch.bytes;
      this.inFlight.set(batchId, batch);
      this.stats.sent += batch.count;
    }
    this.checkDrained();
  }

  /** Admin stored a batch: forget it. */
  ack(batchId: string): void {
    const batch = this.inFlight.get(batchId);
    if (!batch) return;
    this.inFlight.delete(batchId);
    this.nackDelayMs = 0;
    this.stats.acknowledged += batch.count;
    batch.release();
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
    this.requeue([batch]);
  }

  /**
   * The link dropped: every unacknowledged batch goes back to the front, oldest first.
   * @param messageTooBig admin closed the link with 1009 (a message above its bound): the largest
   *   batch in flight is dropped (its records counted in `dropped` and `oversize`), not re-sent. The
   *   batch admin refused is at least as large as every batch it accepted, so the largest in flight
   *   is either that batch or one admin would refuse too; each such close drops one batch, so the
   *   queue never resends a refused batch forever.
   */
  linkLost(messageTooBig = false): void {
    let batches = [...this.inFlight.values()];
    this.inFlight.clear();
    if (messageTooBig && batches.length > 0) {
      const largest = batches.reduce((a, b) => (b.bytes > a.bytes ? b : a));
      batches = batches.filter((b) => b !== largest);
      this.stats.dropped += largest.count;
      this.stats.oversize += largest.count;
      largest.release();
    }
    this.requeue(batches);
  }

  /** Puts sent batches (oldest first) back in front of the waiting ones. */
  private requeue(batches: LogBatch[]): void {
    this.waiting = batches.concat(this.waiting);
    for (const b of batches) {
      this.waitingRecords += b.count;
      this.waitingBytes += b.bytes;
    }
    this.enforceBounds();
  }

  private checkDrained(): void {
    if (this.waitingRecords === 0 && this.inFlight.size === 0) {
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
    }
  }

  /** Resolves when every queued record is acknowledged, or after `timeoutMs` (false then). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.waitingRecords === 0 && this.inFlight.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Records dropped so far (the full queue's oldest, or unserializable): `getStats().dropped` without building the stats. */
  get dropped(): number {
    return this.stats.dropped;
  }

  /** Current counters. */
  getStats(): LogQueueStats {
    let inFlight = 0;
    let bufferBytes = 0;
    for (const b of this.inFlight.values()) {
      inFlight += b.count;
      bufferBytes += b.bufferBytes;
    }
    for (const b of this.waiting) bufferBytes += b.bufferBytes;
    return { queued: this.waitingRecords, queuedBytes: this.waitingBytes, bufferBytes, inFlight, ...this.stats };
  }
}
