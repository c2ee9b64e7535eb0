/**
 * One bucket as bytes in the memory store's arena (./memory.ts): a head, then the bucket's answers
 * one after another, oldest first. Numbers are little-endian; an entry starts at a multiple of 8.
 *
 *   head:   u32 entry bytes (padded to 8) · u8 flags (bit 0: read since written or last moved)
 *           · u8 answers · u8 key bytes · u8 unused · f64 expiry (ms since the epoch) · the key (latin1)
 *   answer: u32 body bytes · u16 status · u16 request id bytes · u16 usage bytes · u8 content type bytes
 *           · u8 streamed · the content type (latin1) · the request id (UTF-8) · the usage (JSON, UTF-8; none:
 *           0 bytes) · the body
 *
 * The usage is the one a translated stream withheld from its client (`CachedAnswer.usage`), for a hit's
 * log record; most answers have none and spend only its two length bytes on it.
 *
 * Keeping a bucket as bytes in one arena, not as objects, is the point: V8's collector never sees
 * the answers a cache holds. Held as objects, every stored answer was promoted out of the young
 * generation and every full collection marked it (300,000 answers: 204 ms a collection, against
 * 5.8 ms now; bench/cache-fill.ts).
 */
import type { ChatUsage } from '../../shared/chat.ts';
import type { AnswerToStore, CachedAnswer } from './types.ts';

/** Bytes of an entry's head before its key. */
const HEAD_BYTES = 16;
/** Bytes of an answer's head before its content type. */
const ANSWER_HEAD_BYTES = 12;
/** Flag bit: the entry was read since it was written or last moved (CLOCK's reference bit). */
const READ = 1;
/** Longest key, content type (bytes), request id and usage (UTF-8 bytes) an entry can hold. */
const MAX_SHORT = 0xff;
const MAX_MEDIUM = 0xffff;

/** Rounds `n` up to a multiple of 8 (entries start aligned, so the f64 expiry is too). */
function padded(n: number): number {
  return n + ((8 - (n % 8)) % 8);
}

/** The usage of `answer` as the entry keeps it: its JSON, '' when it has none. Compute it once per add. */
export function usageText(answer: AnswerToStore): string {
  return answer.usage ? JSON.stringify(answer.usage) : '';
}

/**
 * Bytes an entry for `key` needs: a head, `older` (answers already in the bucket, as bytes) and
 * `answer` with `usage` ({@link usageText}); -1 when a member is longer than the layout allows (such an
 * answer is not kept).
 */
export function entrySize(key: string, older: Buffer | null, answer: AnswerToStore, usage: string): number {
  const idBytes = Buffer.byteLength(answer.requestId);
  const usageBytes = Buffer.byteLength(usage);
  if (key.length > MAX_SHORT || answer.contentType.length > MAX_SHORT || idBytes > MAX_MEDIUM || usageBytes > MAX_MEDIUM) return -1;
  const answerBytes = ANSWER_HEAD_BYTES + answer.contentType.length + idBytes + usageBytes + answer.bytes;
  return padded(HEAD_BYTES + key.length + (older?.length ?? 0) + answerBytes);
}

/**
 * Writes an entry of `size` bytes ({@link entrySize}) at `at`: `older` (`count` answers) then `answer`
 * with `usage` ({@link usageText}), expiring at `expiresAt` (ms since the epoch), not yet read.
 */
export function writeEntry(arena: Buffer, at: number, size: number, key: string, expiresAt: number, older: Buffer | null, count: number, answer: AnswerToStore, usage: string): void {
  arena.writeUInt32LE(size, at);
  arena[at + 4] = 0;
  arena[at + 5] = count + 1;
  arena[at + 6] = key.length;
  arena.writeDoubleLE(expiresAt, at + 8);
  let p = at + HEAD_BYTES + arena.write(key, at + HEAD_BYTES, 'latin1');
  if (older !== null) p += older.copy(arena, p);
  const ct = answer.contentType;
  const h = p;
  p += ANSWER_HEAD_BYTES + arena.write(ct, h + ANSWER_HEAD_BYTES, 'latin1');
  const idBytes = arena.write(answer.requestId, p, 'utf8');
  p += idBytes;
  const usageBytes = usage.length > 0 ? arena.write(usage, p, 'utf8') : 0;
  p += usageBytes;
  arena.writeUInt32LE(answer.bytes, h);
  arena.writeUInt16LE(answer.status, h + 4);
  arena.writeUInt16LE(idBytes, h + 6);
  arena.writeUInt16LE(usageBytes, h + 8);
  arena[h + 10] = ct.length;
  arena[h + 11] = answer.streamed ? 1 : 0;
  for (const chunk of answer.chunks) p += chunk.copy(arena, p);
}

/** The entry's size in bytes. */
export function sizeAt(arena: Buffer, at: number): number {
  return arena.readUInt32LE(at);
}

/** Expiry of the entry at `at` (ms since the epoch). */
export function expiryAt(arena: Buffer, at: number): number {
  return arena.readDoubleLE(at + 8);
}

/** How many answers the entry's bucket holds. */
export function countAt(arena: Buffer, at: number): number {
  return arena[at + 5]!;
}

/** Whether the entry was read since written or last moved (and clears the mark when `clear`). */
export function wasRead(arena: Buffer, at: number, clear: boolean): boolean {
  const read = (arena[at + 4]! & READ) !== 0;
  if (clear) arena[at + 4] = 0;
  return read;
}

/** Marks the entry as read (it survives one turn at the ring's tail). */
export function markRead(arena: Buffer, at: number): void {
  arena[at + 4] = READ;
}

/** True when the entry at `at` holds `key` (two keys can share an index number: this tells them apart). */
export function keyIs(arena: Buffer, at: number, key: string): boolean {
  const n = key.length;
  if (arena[at + 6] !== n) return false;
  const from = at + HEAD_BYTES;
  for (let i = 0; i < n; i++) if (arena[from + i] !== key.charCodeAt(i)) return false;
  return true;
}

/** Hex digits of a key read into its index number (8 × 4 bits, of which {@link keyNumber} keeps 30). */
const KEY_DIGITS = 8;

/** A hex digit's value (either case); other characters give other values, still deterministic. */
function hexValue(c: number): number {
  return c <= 57 ? c - 48 : (c | 32) - 87;
}

/**
 * The index number of a key: 30 bits of it, read as hex. Thirty bits is what V8 keeps as a small
 * integer, so the index's map holds no object per entry. Cache keys are SHA-256 in hex, so a new
 * key shares its number with one already held with odds of (buckets held) / 2³⁰ (0.04 % with
 * 400,000 buckets); the store then keeps the newer (./memory.ts): a miss where a hit could have been.
 */
export function keyNumber(key: string): number {
  const n = Math.min(key.length, KEY_DIGITS);
  let v = 0;
  for (let i = 0; i < n; i++) v = (v << 4) | (hexValue(key.charCodeAt(i)) & 15);
  return v & 0x3fffffff;
}

/** The index number of the entry's own key (see {@link keyNumber}). */
export function keyNumberAt(arena: Buffer, at: number): number {
  const from = at + HEAD_BYTES;
  const n = Math.min(arena[at + 6]!, KEY_DIGITS);
  let v = 0;
  for (let i = 0; i < n; i++) v = (v << 4) | (hexValue(arena[from + i]!) & 15);
  return v & 0x3fffffff;
}

/** The bytes of the entry's answers (a view: copy it before the arena is written again). */
export function answersAt(arena: Buffer, at: number): Buffer {
  const from = at + HEAD_BYTES + arena[at + 6]!;
  let p = from;
  for (let i = countAt(arena, at); i > 0; i--) p += answerBytesAt(arena, p);
  return arena.subarray(from, p);
}

/** Bytes of the answer whose head is at `p`. */
function answerBytesAt(arena: Buffer, p: number): number {
  return ANSWER_HEAD_BYTES + arena[p + 10]! + arena.readUInt16LE(p + 6) + arena.readUInt16LE(p + 8) + arena.readUInt32LE(p);
}

/** The entry's answer `index` (0 = the oldest); its body is a copy, so it outlives the arena's next writes. */
export function readAnswer(arena: Buffer, at: number, index: number): CachedAnswer {
  let p = at + HEAD_BYTES + arena[at + 6]!;
  for (let i = 0; i < index; i++) p += answerBytesAt(arena, p);
  const bodyBytes = arena.readUInt32LE(p);
  const ctEnd = p + ANSWER_HEAD_BYTES + arena[p + 10]!;
  const idEnd = ctEnd + arena.readUInt16LE(p + 6);
  const usageEnd = idEnd + arena.readUInt16LE(p + 8);
  return {
    requestId: arena.toString('utf8', ctEnd, idEnd),
    status: arena.readUInt16LE(p + 4),
    streamed: arena[p + 11] === 1,
    contentType: arena.toString('latin1', p + ANSWER_HEAD_BYTES, ctEnd),
    body: Buffer.from(arena.subarray(usageEnd, usageEnd + bodyBytes)),
    usage: usageEnd > idEnd ? (JSON.parse(arena.toString('utf8', idEnd, usageEnd)) as ChatUsage) : null,
  };
}
