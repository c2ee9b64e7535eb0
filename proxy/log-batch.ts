/**
 * One batch of log records as the log queue builds it: the batch message itself, written in place.
 * Each record is written once, straight into the batch's buffer behind room left for the batch
 * header (shared/record-batch.ts), so sending the batch is writing that header and handing over a
 * view: no per-record buffer, no concatenation, and nothing per record for the garbage collector
 * to trace while the batch waits for admin's ack. Buffers of the standard size are reused through
 * a small free list once admin acknowledged their batch.
 */
import { BATCH_HEADER_BYTES, writeBatchHeader, writeRecord } from '../shared/record-batch.ts';

/** Bytes of a standard batch buffer; a record larger than what is left opens a new batch. */
export const BATCH_BUFFER_BYTES = 1024 * 1024;
/** Free standard buffers kept for reuse (the rest are left to the garbage collector). */
const FREE_LIST_MAX = 8;
const freeList: Buffer[] = [];

/** A batch being filled, waiting, or in flight. */
export class LogBatch {
  /** Where each record starts in {@link buffer} (offsets, ascending). */
  private starts: number[] = [];
  /** The first record still in the batch (records before it were dropped by the queue's bounds). */
  private first = 0;
  /** Bytes of the buffer in use (header room included). */
  private used = BATCH_HEADER_BYTES;
  /** No more records are added (full, or sent at least once). */
  closed = false;

  private constructor(private buffer: Buffer) {}

  /**
   * A new, empty batch whose buffer holds at least `recordBytes` of records.
   * @param recordBytes the size of the first record it will take (bytes).
   */
  static open(recordBytes: number): LogBatch {
    const need = BATCH_HEADER_BYTES + recordBytes;
    if (need > BATCH_BUFFER_BYTES) return new LogBatch(Buffer.allocUnsafeSlow(need));
    return new LogBatch(freeList.pop() ?? Buffer.allocUnsafeSlow(BATCH_BUFFER_BYTES));
  }

  /** Records in the batch. */
  get count(): number {
    return this.starts.length - this.first;
  }

  /** Bytes of the records in the batch (header excluded). */
  get bytes(): number {
    return this.used - (this.first < this.starts.length ? this.starts[this.first]! : this.used);
  }

  /** Bytes of memory the batch holds (its buffer). */
  get bufferBytes(): number {
    return this.buffer.length;
  }

  /**
   * Moves the batch into a buffer of its own size and frees the standard one: for a full batch
   * that will wait behind another (admin unreachable, or as many batches in flight as allowed), so
   * that a backlog holds about its records' bytes, not a standard buffer per batch.
   */
  shrink(): void {
    if (this.buffer.length !== BATCH_BUFFER_BYTES || this.used * 2 > this.buffer.length) return;
    const own = Buffer.allocUnsafeSlow(this.used);
    this.buffer.copy(own, 0, 0, this.used);
    this.release();
    this.buffer = own;
  }

  /** True when a record of `recordBytes` still fits in the buffer. */
  fits(recordBytes: number): boolean {
    return this.used + recordBytes <= this.buffer.length;
  }

  /** Appends one record (see shared/record-batch.ts `writeRecord`); the caller checked {@link fits}. */
  add(head: string, headBytes: number, requestBody: Buffer | null, responseBody: Buffer | null): void {
    this.starts.push(this.used);
    this.used = writeRecord(this.buffer, this.used, head, headBytes, requestBody, responseBody);
  }

  /** Drops the oldest record. @returns its bytes. */
  dropOldest(): number {
    const start = this.starts[this.first++]!;
    const end = this.first < this.starts.length ? this.starts[this.first]! : this.used;
    return end - start;
  }

  /**
   * The batch message under `batchId`: a view of the buffer when no record was dropped, else the
   * remaining records moved up behind the header (only after the queue's bounds dropped some).
   */
  message(batchId: string): Buffer {
    if (this.first > 0) this.compact();
    writeBatchHeader(this.buffer, batchId, this.count);
    return this.buffer.subarray(0, this.used);
  }

  /** Moves the remaining records to the front, so the header sits right before them again. */
  private compact(): void {
    const from = this.starts[this.first] ?? this.used;
    const shift = from - BATCH_HEADER_BYTES;
    this.buffer.copy(this.buffer, BATCH_HEADER_BYTES, from, this.used);
    this.starts = this.starts.slice(this.first).map((s) => s - shift);
    this.first = 0;
    this.used -= shift;
  }

  /** Admin acknowledged the batch: its buffer goes back to the free list. The batch is unusable after. */
  release(): void {
    if (this.buffer.length === BATCH_BUFFER_BYTES && freeList.length < FREE_LIST_MAX) freeList.push(this.buffer);
    this.buffer = EMPTY;
  }
}

const EMPTY = Buffer.alloc(0);
