/**
 * Faults of the PostgreSQL driver (postgres.js 3.4.9) that surface as an uncaught exception although
 * no query of admin's is left without an answer. Admin's `uncaughtException` handler stays up for
 * these (logging a warning) and exits for anything else.
 *
 * - A stray write on a connection postgres.js already closed, when a backend dies mid-transaction: a
 *   TypeError thrown from its `nextWrite` (porsager/postgres#1208; fix pending in #1155/#1215). The
 *   transaction itself already failed and its caller was told.
 * - The array-type fetch every new connection runs first (`fetch_types`, the default): postgres.js
 *   starts it from `ReadyForQuery` (`return fetchArrayTypes()` in src/connection.js) and drops its
 *   promise, so when that query fails its error is an unhandled rejection, which Node raises as an
 *   uncaught exception (porsager/postgres#1192, #1205, #1223; open). It fails so in several ways:
 *   - a PostgresError when the query itself is refused or cancelled (the backend terminated while
 *     the connection starts, as when PostgreSQL restarts or an operator runs `pg_terminate_backend`;
 *     or `statement_timeout`);
 *   - `CONNECTION_CLOSED` raised from `closed()` when the startup's ReadyForQuery and the backend's
 *     FATAL arrive in one read (a busy event loop under load): the FATAL fails the caller's first
 *     query and clears the connection's startup state, then the deferred fetch starts on the dying
 *     connection and is failed by its close (seen in CI: test/e2e-faults.test.ts, backends
 *     terminated every 300 ms under load);
 *   - the socket's own error (`ECONNRESET`) on the same path.
 *   Every one carries the fetch's query as `query`, which is how it is recognised. The connection
 *   reconnects by itself and the user query waiting on it fails on its own terms (log batches are
 *   then nacked and re-sent), so nothing is lost by staying up.
 */

/** The start of postgres.js 3.4.9's array-type query (src/connection.js `fetchArrayTypes`), spaces collapsed. */
const ARRAY_TYPE_QUERY = 'select b.oid, b.typarray from pg_catalog.pg_type a';

/**
 * Which known driver fault `err` is, or null for any other error (which must stop the process).
 * @param err what reached `process.on('uncaughtException')` (for an unhandled rejection: its reason).
 * @returns `closed-socket-write` (porsager/postgres#1208) or `array-type-fetch` (#1192), whatever
 *   error the fetch failed with (see the module comment), else null.
 */
export function postgresDriverFault(err: unknown): 'closed-socket-write' | 'array-type-fetch' | null {
  if (!(err instanceof Error)) return null;
  const stack = err.stack ?? '';
  if (err instanceof TypeError && /nextWrite/.test(stack) && /node_modules[\\/]postgres[\\/]/.test(stack)) return 'closed-socket-write';
  const query = (err as { query?: unknown }).query;
  if (typeof query === 'string' && query.replace(/\s+/g, ' ').trim().startsWith(ARRAY_TYPE_QUERY)) return 'array-type-fetch';
  return null;
}
