/**
 * Faults of the PostgreSQL driver (postgres.js 3.4.9) that surface as an uncaught exception although
 * no query of admin's is left without an answer. Admin's `uncaughtException` handler stays up for
 * these (logging a warning) and exits for anything else.
 *
 * - A stray write on a connection postgres.js already closed, when a backend dies mid-transaction: a
 *   TypeError thrown from its `nextWrite` (porsager/postgres#1208; fix pending in #1155/#1215). The
 *   transaction itself already failed and its caller was told.
 * - The array-type fetch every new connection runs first (`fetch_types`, the default): postgres.js
 *   starts it from `ReadyForQuery` and drops its promise, so when that query fails (the backend
 *   terminated while the connection starts, as when PostgreSQL restarts or an operator runs
 *   `pg_terminate_backend`; or cancelled by `statement_timeout`), its PostgresError is an unhandled
 *   rejection, which Node raises as an uncaught exception (porsager/postgres#1192, #1205, #1223; open).
 *   The connection reconnects by itself and the user query waiting on it fails on its own terms
 *   (log batches are then nacked and re-sent), so nothing is lost by staying up.
 * - The connection error postgres.js makes when the server closes a connection with a query or a
 *   COPY under way (`write CONNECTION_CLOSED host:port`, code `CONNECTION_CLOSED`, raised from
 *   `closed` in its src/connection.js), reaching the process with no handler left on whatever it
 *   was handed to. Seen once in CI (test/e2e-faults.test.ts, backends terminated every 300 ms under
 *   load; it stopped admin and failed the run). Whatever it was attached to already failed; a COPY
 *   that lost track of it is ended after COPY_TIMEOUT_MS (admin/request-log-copy.ts) and its batch
 *   nacked and re-sent, so nothing is lost by staying up.
 */

/** The start of postgres.js 3.4.9's array-type query (src/connection.js `fetchArrayTypes`), spaces collapsed. */
const ARRAY_TYPE_QUERY = 'select b.oid, b.typarray from pg_catalog.pg_type a';

/** A frame of postgres.js's `closed` (src/connection.js), where it makes its connection errors. */
const CLOSED_FRAME = /\bat (?:Socket\.)?closed \(.*node_modules[\\/]postgres[\\/]src[\\/]connection\.js:/;

/**
 * Which known driver fault `err` is, or null for any other error (which must stop the process).
 * @param err what reached `process.on('uncaughtException')` (for an unhandled rejection: its reason).
 * @returns `closed-socket-write` (porsager/postgres#1208), `array-type-fetch` (#1192) or
 *   `connection-closed` (see the module comment), else null.
 */
export function postgresDriverFault(err: unknown): 'closed-socket-write' | 'array-type-fetch' | 'connection-closed' | null {
  if (!(err instanceof Error)) return null;
  const stack = err.stack ?? '';
  if (err instanceof TypeError && /nextWrite/.test(stack) && /node_modules[\\/]postgres[\\/]/.test(stack)) return 'closed-socket-write';
  if ((err as { code?: unknown }).code === 'CONNECTION_CLOSED' && CLOSED_FRAME.test(stack)) return 'connection-closed';
  const query = (err as { query?: unknown }).query;
  if (err.name === 'PostgresError' && typeof query === 'string' && query.replace(/\s+/g, ' ').trim().startsWith(ARRAY_TYPE_QUERY)) return 'array-type-fetch';
  return null;
}
