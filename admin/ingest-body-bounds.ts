/**
 * Bounds of the bodies admin stores in `request_log` (`request_body`, `response_body`: json
 * columns), whatever a link sends (any API key of an organization may open one, so a link's
 * records are not trusted to be the proxy's):
 *
 * - Size: a body's JSON text above {@link MAX_STORED_BODY_BYTES} is cut there (on a UTF-8
 *   character boundary) and stored as `{raw: text}`, the row's `extra.bodyTruncated` set: what the
 *   proxy does with a body above `log-queue.max-body-bytes` (proxy/observers/log-record.ts
 *   queueRefused sends the bytes cut and `bodyTruncated`; admin keeps the cut, non-JSON text as
 *   `{raw: text}`, admin/decoded-record.ts). Unbounded, four 50 MB bodies made one COPY outlast
 *   its 30 s limit, so the batch was nacked and re-sent although it had been stored.
 * - Nesting: PostgreSQL's json input parses recursively and refuses a deep text (SQLSTATE 54001,
 *   "stack depth limit exceeded": between 10,000 and 50,000 levels at the default
 *   `max_stack_depth` of 2 MB), while the proxy logs a body it refused as nested deeper than 128
 *   levels (proxy/stages/validate.ts) as it came. Such a body is stored as `{raw: text}`, a JSON
 *   string PostgreSQL takes at any depth: found before the COPY in a refused request's body (the
 *   caller says which are suspect: those of a status ≥ 400) when its text has a run of
 *   {@link DEEP_RUN} opening brackets (the cheapest nesting, 2 bytes a level, found with one
 *   native search: ~5 µs on a 49 KB body, too much to spend on every row), else when PostgreSQL
 *   refuses its row (admin/ingest.ts), which costs that batch the slower INSERT fallback only.
 */
import { jsonbText } from './jsonb-text.ts';
import type { StoredBody } from './decoded-record.ts';

/**
 * Default bound of one stored body's JSON text, in bytes: 16 MiB. Above what a proxy sends with
 * its defaults (a request body up to `server.max-body-size`, 10 MiB; an answer up to
 * `log-queue.max-body-bytes`, 1 MiB), and below the control plane's largest message (20 MiB).
 */
export const MAX_STORED_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Deepest nesting (objects and arrays) of a body stored as JSON; deeper is stored as `{raw: text}`.
 * Far above the proxy's 128 (so every body it accepted stays JSON), below what PostgreSQL's json
 * input takes at the smallest `max_stack_depth` (100 kB: a few thousand levels).
 */
export const MAX_STORED_BODY_DEPTH = 1000;

/** Opening brackets in a row that make a body worth a depth scan before the COPY. */
const DEEP_RUN = '['.repeat(32);

/** Bodies of a batch admin cut or stored as `{raw: text}` ({@link boundBody}), counted for the batch's result. */
export interface BoundedBodyCounts {
  cut: number;
  asText: number;
}

/** What became of a body on its way into its row. */
export interface BoundedBody {
  /** The JSON text stored (null: SQL NULL). */
  text: StoredBody;
  /** True when the body was above the bound and cut. */
  cut: boolean;
  /** True when the body, cut or too deep, is stored as `{raw: text}`. */
  asText: boolean;
}

/**
 * The JSON text `{"raw": text}`, made jsonb-safe (admin/jsonb-text.ts), for a body stored as text.
 * @param text the body's text, or its UTF-8 bytes.
 */
export function rawBodyText(text: Buffer | string): string {
  return jsonbText({ raw: typeof text === 'string' ? text : text.toString('utf8') })!;
}

/** The UTF-8 byte length of a stored text, counted only when it may exceed `max` (a UTF-16 unit is at most 3 bytes). */
function exceeds(text: Buffer | string, max: number): boolean {
  if (Buffer.isBuffer(text)) return text.length > max;
  return text.length * 3 > max && Buffer.byteLength(text) > max;
}

/** The first `max` bytes of `bytes` or fewer: never past the start of a character that does not fit whole. */
function cutAt(bytes: Buffer, max: number): Buffer {
  let end = max;
  // Back over continuation bytes (10xxxxxx) to the lead byte of the character `max` falls in.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

/**
 * `text` cut to at most `max` UTF-8 bytes, on a character boundary; returned as it is when it fits.
 * Never throws.
 */
export function cutText(text: string, max: number): string {
  if (!exceeds(text, max)) return text;
  return cutAt(Buffer.from(text, 'utf8'), max).toString('utf8');
}

/**
 * True when the JSON text nests objects and arrays deeper than `limit` (brackets inside strings
 * not counted). A byte loop: run only on texts {@link boundBody} found suspect.
 */
function nestsDeeperThan(bytes: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * A body's JSON text as it may be stored (see the module comment): as it is, cut to `maxBytes` as
 * `{raw: text}`, or, too deep, as `{raw: text}` whole.
 * @param text the body's JSON text (bytes as they arrived, or a string), or null.
 * @param suspect true to look for a deep nesting (a refused request's body may be one).
 * @param maxBytes the bound, in bytes ({@link MAX_STORED_BODY_BYTES} by default).
 */
export function boundBody(text: StoredBody, suspect: boolean, maxBytes: number = MAX_STORED_BODY_BYTES): BoundedBody {
  if (text === null) return { text, cut: false, asText: false };
  if (exceeds(text, maxBytes)) {
    const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
    return { text: rawBodyText(cutAt(bytes, maxBytes)), cut: true, asText: true };
  }
  if (suspect && text.length > 2 * MAX_STORED_BODY_DEPTH && text.includes(DEEP_RUN)) {
    const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8');
    if (nestsDeeperThan(bytes, MAX_STORED_BODY_DEPTH)) return { text: rawBodyText(text), cut: false, asText: true };
  }
  return { text, cut: false, asText: false };
}

/**
 * A row's bodies for another try once PostgreSQL refused the row's data: those nested deeper than
 * {@link MAX_STORED_BODY_DEPTH} (a full scan: a refused row is rare) as `{raw: text}`, or, when
 * neither is, every body (the refusal may be another body's, such as a depth PostgreSQL takes
 * less of under a smaller `max_stack_depth`).
 * @param bodies the row's stored body texts (null: none).
 * @returns the bodies to try and how many became text, or null when there is no body to change.
 */
export function bodiesAsText(bodies: readonly StoredBody[]): { bodies: StoredBody[]; asText: number } | null {
  const deep = bodies.map((b) => b !== null && nestsDeeperThan(Buffer.isBuffer(b) ? b : Buffer.from(b, 'utf8'), MAX_STORED_BODY_DEPTH));
  const all = !deep.includes(true);
  let asText = 0;
  const out = bodies.map((b, i) => {
    if (b === null || !(all || deep[i])) return b;
    asText++;
    return rawBodyText(b);
  });
  return asText > 0 ? { bodies: out, asText } : null;
}

/**
 * The JSON text of a body value (a record of a JSON `records` message, or a body admin parsed as
 * `{raw: text}`): admin/jsonb-text.ts's. A value too deep for JSON.stringify (V8 recurses, and
 * throws a RangeError at about 10,000 levels) has no text left to keep: it is stored as a `raw`
 * note saying so, so the record is stored rather than rejected.
 * @returns null for null and undefined.
 */
export function bodyValueText(value: unknown): string | null {
  try {
    return jsonbText(value);
  } catch (err) {
    // RangeError: V8's "Maximum call stack size exceeded" (or "Invalid string length").
    if (!(err instanceof RangeError)) throw err;
    return rawBodyText('(body not kept: nested too deeply or too large to serialize)');
  }
}
