/**
 * The binary batch of log records a proxy sends admin on the control-plane WebSocket (one binary
 * message per batch). Bodies travel as the bytes the proxy already holds: the client's request body
 * as received and a non-streamed response body as it reached the client, never parsed or
 * serialized again on the proxy. The rest of a record (its "head": the {@link LogRecord} members
 * other than those raw bodies) is one JSON text: since version 2 the positional head of
 * shared/record-head.ts (a JSON array, as this proxy writes it); version 1 had the record object,
 * which admin still reads (in a batch of either version), so an older proxy's batches are stored.
 * A newer admin is needed for a newer version: an older one refuses such a batch with a negative
 * ack, and the proxy keeps it and retries.
 *
 * Layout (integers unsigned, big-endian):
 * ```
 * u8       version (2; 1 is read too)
 * 36 B     batch id (ASCII, a UUID)
 * u32      record count
 * per record:
 *   u32    head length, then the head (UTF-8 JSON: an array of HEAD_MEMBERS' values, or an object)
 *   u32    request body length, then its bytes; 0xFFFFFFFF: none (the head's `requestBody` stands)
 *   u32    response body length, then its bytes; 0xFFFFFFFF: none (the head's `responseBody` stands)
 * ```
 * A raw request body is valid JSON (the proxy parsed it). A raw response body is the provider's
 * non-streamed body as received and is NOT checked: admin parses it and keeps one that is not JSON
 * as `{ "raw": text }`; when the head's `usage` is null, admin reads the body's `usage`.
 */

/** Version byte of the layout above, as written. */
export const RECORD_BATCH_VERSION = 2;
/** The oldest version {@link decodeBatch} reads. */
export const OLDEST_RECORD_BATCH_VERSION = 1;
const ID_BYTES = 36;
const NONE = 0xffffffff;
/** Bytes of a batch's header: version, id, record count. */
export const BATCH_HEADER_BYTES = 1 + ID_BYTES + 4;

/** One record, encoded: its head's JSON bytes and its raw bodies (null: none). */
export interface EncodedRecord {
  head: Buffer;
  requestBody: Buffer | null;
  responseBody: Buffer | null;
}

/** One record as decoded: views into the message (no copies). */
export type DecodedRecord = EncodedRecord;

/** Bytes of a record's wire form besides its head and bodies (three u32 lengths). */
export const RECORD_OVERHEAD = 12;

/**
 * Bytes of one record's wire form (what {@link writeRecord} writes).
 * @param headBytes UTF-8 bytes of the head's JSON text.
 */
export function recordSize(headBytes: number, requestBody: Buffer | null, responseBody: Buffer | null): number {
  return RECORD_OVERHEAD + headBytes + (requestBody?.length ?? 0) + (responseBody?.length ?? 0);
}

/**
 * Writes one record's wire form into `out` at `at` (the caller made room: {@link recordSize}).
 * @param head the record's head, a JSON text (positional array, or object) of `headBytes` UTF-8 bytes.
 * @returns the offset after the record.
 */
export function writeRecord(out: Buffer, at: number, head: string, headBytes: number, requestBody: Buffer | null, responseBody: Buffer | null): number {
  out.writeUInt32BE(headBytes, at);
  out.write(head, at + 4, headBytes, 'utf8');
  at = writePart(out, at + 4 + headBytes, requestBody);
  return writePart(out, at, responseBody);
}

/**
 * Encodes one record's parts into its wire bytes (what a batch concatenates).
 * @param head the record's head, a JSON text (positional array, or object).
 * @returns a Buffer of `12 + bytes of head and bodies`.
 */
export function encodeRecord(head: string, requestBody: Buffer | null, responseBody: Buffer | null): Buffer {
  const headBytes = Buffer.byteLength(head);
  const out = Buffer.allocUnsafe(recordSize(headBytes, requestBody, responseBody));
  writeRecord(out, 0, head, headBytes, requestBody, responseBody);
  return out;
}

function writePart(out: Buffer, at: number, part: Buffer | null): number {
  if (part === null) {
    out.writeUInt32BE(NONE, at);
    return at + 4;
  }
  out.writeUInt32BE(part.length, at);
  part.copy(out, at + 4);
  return at + 4 + part.length;
}

/**
 * Writes a batch's header (version, id, record count) into the first {@link BATCH_HEADER_BYTES}
 * bytes of `out`, in front of records written there by {@link writeRecord}.
 * @param batchId a UUID (36 ASCII characters).
 * @throws {RangeError} when `batchId` is not 36 ASCII bytes.
 */
export function writeBatchHeader(out: Buffer, batchId: string, count: number): void {
  if (batchId.length !== ID_BYTES || !/^[\x21-\x7e]*$/.test(batchId)) throw new RangeError('batchId must be 36 ASCII characters (a UUID)');
  out.writeUInt8(RECORD_BATCH_VERSION, 0);
  out.write(batchId, 1, ID_BYTES, 'latin1');
  out.writeUInt32BE(count, 1 + ID_BYTES);
}

/**
 * The batch message of records encoded by {@link encodeRecord}.
 * @param batchId a UUID (36 ASCII characters).
 * @throws {RangeError} when `batchId` is not 36 ASCII bytes.
 */
export function encodeBatch(batchId: string, records: readonly Buffer[]): Buffer {
  const header = Buffer.allocUnsafe(BATCH_HEADER_BYTES);
  writeBatchHeader(header, batchId, records.length);
  let size = BATCH_HEADER_BYTES;
  for (const r of records) size += r.length;
  return Buffer.concat([header, ...records], size);
}

/** What a batch message's header says; see {@link readBatchHeader}. */
export interface BatchHeader {
  /** The version byte; null for an empty message. */
  version: number | null;
  /** The batch id as written (not checked); '' when the message is cut before its end. */
  batchId: string;
  /** The record count; 0 when the message is cut before it. */
  count: number;
}

/**
 * Reads a batch message's header alone, without decoding its records (a message may be malformed:
 * what it is too short to hold reads as null, '' or 0).
 */
export function readBatchHeader(message: Buffer): BatchHeader {
  return {
    version: message.length > 0 ? message[0]! : null,
    batchId: message.length >= 1 + ID_BYTES ? message.toString('latin1', 1, 1 + ID_BYTES) : '',
    count: message.length >= BATCH_HEADER_BYTES ? message.readUInt32BE(1 + ID_BYTES) : 0,
  };
}

/**
 * Decodes a batch message.
 * @returns the batch id and its records (views into `message`).
 * @throws {RangeError} naming what is wrong when the message is not a whole batch of this version.
 */
export function decodeBatch(message: Buffer): { batchId: string; records: DecodedRecord[] } {
  if (message.length < BATCH_HEADER_BYTES) throw new RangeError('record batch: shorter than its header');
  const { version, batchId, count } = readBatchHeader(message);
  if (version! < OLDEST_RECORD_BATCH_VERSION || version! > RECORD_BATCH_VERSION) {
    throw new RangeError(`record batch: version ${version} (expected ${OLDEST_RECORD_BATCH_VERSION} to ${RECORD_BATCH_VERSION})`);
  }
  const records: DecodedRecord[] = [];
  let at = BATCH_HEADER_BYTES;
  const part = (what: string, nullable: boolean): Buffer | null => {
    if (at + 4 > message.length) throw new RangeError(`record batch: record ${records.length} cut before its ${what}`);
    const length = message.readUInt32BE(at);
    at += 4;
    if (length === NONE && nullable) return null;
    if (at + length > message.length) throw new RangeError(`record batch: record ${records.length}: ${what} of ${length} bytes overruns the message`);
    const bytes = message.subarray(at, at + length);
    at += length;
    return bytes;
  };
  for (let i = 0; i < count; i++) {
    const head = part('head', false)!;
    const requestBody = part('request body', true);
    const responseBody = part('response body', true);
    records.push({ head, requestBody, responseBody });
  }
  if (at !== message.length) throw new RangeError(`record batch: ${message.length - at} bytes after the last of ${count} records`);
  return { batchId, records };
}
