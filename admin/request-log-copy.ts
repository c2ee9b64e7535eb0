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

/** A value of a COPY row: text (jsonb columns get their JSON text), a number, a boolean, a Date, or null (NULL). */
export type CopyValue = string | number | boolean | Date | null | undefined;

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
 * One value in COPY text format: NULL as `\N`, booleans `t`/`f`, Dates as ISO 8601 (UTC), numbers
 * as JS writes them, text with backslash, tab, newline and carriage return escaped.
 * @throws {RangeError} for an invalid Date (from toISOString).
 */
export function copyField(value: CopyValue): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return copyString(value);
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return value.toISOString();
  return String(value);
}

/**
 * The COPY text of rows: each row's values (in the statement's column order) tab-separated, one
 * line per row, every line ending in a newline.
 * @throws {RangeError} as {@link copyField}.
 */
export function copyText(rows: readonly (readonly CopyValue[])[]): string {
  let out = '';
  for (const row of rows) {
    // A line of its own first: appending to a short string keeps the big one's rope shallow.
    let line = copyField(row[0]);
    for (let i = 1; i < row.length; i++) line += '\t' + copyField(row[i]);
    out += line + '\n';
  }
  return out;
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
  const data = Buffer.from(copyText(rows));
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
function runCopy(query: postgres.PendingQuery<postgres.Row[]>, data: Buffer): Promise<void> {
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
      stream.end(data);
    }, settle);
  });
}
