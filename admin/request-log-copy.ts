/**
 * Rows into `request_log` with one `COPY ... FROM STDIN` (text format) per batch: PostgreSQL parses
 * no statement with thousands of parameters and admin serializes each value once, into one
 * message. COPY is all or nothing and has no `on conflict`: a row already stored (a batch re-sent
 * after a lost ack) or a row PostgreSQL refuses fails the whole COPY, and the caller falls back to
 * INSERTs (admin/ingest.ts).
 *
 * The text format (PostgreSQL docs, "COPY", "Text Format"): one line per row, columns separated by
 * a tab, `\N` for NULL, and a backslash, tab, newline or carriage return inside a value written as
 * `\\`, `\t`, `\n`, `\r`. Other bytes go as they are (UTF-8).
 */
import type { Writable } from 'node:stream';
import type postgres from 'postgres';
import type { Sql } from './db.ts';

/**
 * A value of a COPY row: text (JSON columns get their JSON text), UTF-8 bytes of a text (a raw body
 * stored as it arrived), a number, a boolean, a Date, or null (NULL).
 */
export type CopyValue = string | Buffer | number | boolean | Date | null | undefined;

// U+0000 has no place in PostgreSQL text (nor an escape that would mean it): U+FFFD, as for text
// columns in admin/ingest.ts. The backslash comes first, so the escapes made after it are not doubled.
const ESCAPES: ReadonlyArray<readonly [string, string]> = [
  ['\\', '\\\\'],
  ['\t', '\\t'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\0', '\ufffd'],
];

/**
 * Below this length a value is scanned with a charCode loop; from it on with one native
 * `includes` per escaped character, which is much faster per character than a JS loop or a regex
 * (bodies are ~1 KB), but costs a call each (measured with bench/ingest.ts).
 */
const SHORT_TEXT = 64;

/** True when a short `text` holds a character the text format escapes. */
function shortNeedsEscape(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // One comparison for nearly every character: the escaped ones are 0, 9, 10, 13 and 92.
    if (c <= 13 ? c === 9 || c === 10 || c === 13 || c === 0 : c === 92) return true;
  }
  return false;
}

/**
 * A text value in COPY text format (see {@link copyField}); returned as it is when nothing needs
 * escaping. Otherwise one native replaceAll per character present: a pretty-printed JSON body has
 * dozens of newlines, and a regex replace calling a function per match cost µs a row.
 */
function copyString(text: string): string {
  if (text.length < SHORT_TEXT && !shortNeedsEscape(text)) return text;
  let out = text;
  for (const [char, escaped] of ESCAPES) if (out.includes(char)) out = out.replaceAll(char, escaped);
  return out;
}

/**
 * {@link ESCAPES} for a text of one character per byte (UTF-8 bytes read as latin1): U+FFFD as its
 * three UTF-8 bytes. UTF-8 never uses bytes below 0x80 inside a multi-byte character, so each byte
 * escaped here is always the character it stands for.
 */
const BYTE_ESCAPES: ReadonlyArray<readonly [string, string]> = ESCAPES.map(([char, escaped]) => [char, Buffer.from(escaped).toString('latin1')]);

/**
 * `bytes` (a text's UTF-8 bytes) in COPY text format, as a string of one character per byte. Read
 * as latin1 the bytes stay bytes, so the native `includes`/`replaceAll` escape them and a latin1
 * write puts them back unchanged. A row of Claude Code's ~49 KB request (~450 backslashes) took
 * ~38 µs this way, against ~130 µs for views of the stretches between them joined by Buffer.concat.
 */
function escapedBytes(bytes: Buffer): string {
  let out = bytes.toString('latin1');
  for (const [char, escaped] of BYTE_ESCAPES) if (out.includes(char)) out = out.replaceAll(char, escaped);
  return out;
}

/**
 * One value in COPY text format: NULL as `\N`, booleans `t`/`f`, Dates as ISO 8601 (UTC), numbers
 * as JS writes them, text with backslash, tab, newline and carriage return escaped.
 * @throws {RangeError} for an invalid Date (from toISOString).
 */
export function copyField(value: Exclude<CopyValue, Buffer>): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return copyString(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/**
 * Bytes of COPY data written to PostgreSQL at a time (at a row's end; a longer row is one write
 * alone). A batch of Claude Code requests is ~15 MB: one buffer of that size and postgres.js's
 * framed copy of it were fresh memory each batch, and touching it cost more than the copying did.
 */
const COPY_CHUNK_BYTES = 256 * 1024;

/** Pieces of COPY data: text (written as UTF-8) at even indexes, escaped bytes (latin1) at odd ones. */
function joinPieces(pieces: readonly string[], bytes: number): Buffer {
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = 0; i < pieces.length; i++) at += out.write(pieces[i]!, at, i % 2 === 0 ? 'utf8' : 'latin1');
  return out;
}

/**
 * The COPY data of rows: each row's values (in the statement's column order) tab-separated, one
 * line per row, every line ending in a newline, as UTF-8 bytes in chunks of about
 * {@link COPY_CHUNK_BYTES}. A byte value is escaped as bytes and written once, into its chunk: a
 * large body never becomes a UTF-16 JS string on this path.
 * @throws {RangeError} as {@link copyField}.
 */
export function copyData(rows: readonly (readonly CopyValue[])[]): Buffer[] {
  const chunks: Buffer[] = [];
  let pieces: string[] = [];
  let bytes = 0;
  let text = '';
  for (const row of rows) {
    // A line of its own first: appending to a short string keeps the big one's rope shallow.
    let line = '';
    for (let i = 0; i < row.length; i++) {
      const value = row[i];
      if (i > 0) line += '\t';
      if (!Buffer.isBuffer(value)) {
        line += copyField(value);
        continue;
      }
      text += line;
      line = '';
      const escaped = escapedBytes(value);
      pieces.push(text, escaped);
      bytes += Buffer.byteLength(text) + escaped.length;
      text = '';
    }
    text += line + '\n';
    // text.length counts UTF-16 units, not bytes: close enough for where a chunk ends.
    if (bytes + text.length >= COPY_CHUNK_BYTES) {
      pieces.push(text);
      chunks.push(joinPieces(pieces, bytes + Buffer.byteLength(text)));
      pieces = [];
      bytes = 0;
      text = '';
    }
  }
  if (text.length > 0 || pieces.length > 0) {
    pieces.push(text);
    chunks.push(joinPieces(pieces, bytes + Buffer.byteLength(text)));
  }
  return chunks;
}

/**
 * Stores rows in `request_log` with one COPY. Resolves once PostgreSQL committed them all.
 * @param columns the `request_log` columns the rows' values are in, in order.
 * @returns the number of rows stored (all of them; COPY stores all or none).
 * @throws the PostgreSQL error (with its SQLSTATE `code`: 23505 when a row's id is already stored,
 *   22xxx / 54xxx when a row's data is refused) or the connection error; then no row is stored.
 */
export async function copyRequestLogRows(sql: Sql, columns: readonly string[], rows: readonly (readonly CopyValue[])[]): Promise<number> {
  if (rows.length === 0) return 0;
  const data = copyData(rows);
  await runCopy(sql`copy request_log (${sql(columns as string[])}) from stdin`, data);
  return rows.length;
}

/** The postgres.js 3.4.9 internals {@link runCopy} relies on (src/query.js, src/connection.js). */
interface QueryInternals {
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  options: { onexecute?: () => boolean };
}

/**
 * How long a COPY may take before it is given up, in ms. A batch of 500 small rows takes tens of
 * ms; the limit only ends a COPY postgres.js lost track of (see {@link runCopy}).
 */
export const COPY_TIMEOUT_MS = 30_000;

/**
 * Sends `data` into a `COPY ... FROM STDIN` query and settles when the server has answered.
 * postgres.js 3.4.9 gaps are closed through its query's internals (checked by
 * test/ingest-binary.test.ts, against the real server):
 * - it pipelines other queries onto a connection whose query is under way, and a query sent while
 *   the server is in COPY mode breaks the COPY; `onexecute` answering false marks the connection
 *   full until the COPY is over, as postgres.js's own sql.begin() does. (sql.reserve() would do
 *   the same, but with connections terminated it hung and its release revived closed connections.)
 * - it settles the writable only on success: an error the server reports after the data was
 *   ended never reaches the stream (porsager/postgres#1173, PR #1183 unmerged), and only the
 *   query's own reject is called. So that reject is wrapped, and the first of the stream's finish,
 *   its error or that reject settles the copy.
 * - with connections terminated under load it may lose a COPY altogether (seen in
 *   test/e2e-faults.test.ts: a reconnected connection resolves the previous connection's query,
 *   or never answers it); after {@link COPY_TIMEOUT_MS} the copy is rejected, so the batch is
 *   nacked and re-sent (rows a late COPY stored are then skipped as duplicates).
 * @throws the PostgreSQL or connection error, or an Error when the COPY did not start or timed out.
 */
function runCopy(query: postgres.PendingQuery<postgres.Row[]>, data: readonly Buffer[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`COPY into request_log did not finish within ${COPY_TIMEOUT_MS} ms`)), COPY_TIMEOUT_MS);
    const settle = (err?: unknown): void => {
      clearTimeout(timer);
      if (err === undefined) resolve();
      else reject(err);
    };
    const q = query as unknown as QueryInternals;
    q.options.onexecute = () => false;
    const originalReject = q.reject;
    q.reject = (err) => {
      settle(err);
      originalReject(err);
    };
    // Listeners go on the stream the moment postgres.js makes it: a connection lost in the same
    // read destroys it before a then() callback could run, and an 'error' without a listener would
    // be an uncaught exception. They stay: the stream may still error or finish after the copy settled.
    const originalResolve = q.resolve;
    q.resolve = (value) => {
      const stream = value as Writable | null;
      if (typeof stream?.on === 'function') {
        stream.on('error', settle);
        stream.on('finish', () => settle());
      }
      originalResolve(value);
    };
    query.writable().then((stream) => {
      if (typeof (stream as { end?: unknown })?.end !== 'function') return settle(new Error('COPY into request_log did not start'));
      for (const chunk of data) stream.write(chunk);
      stream.end();
    }, settle);
  });
}
