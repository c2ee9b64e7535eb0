/**
 * admin/postgres-driver-faults.ts tells the postgres.js faults admin survives from every other
 * uncaught exception. The array-type fetch's fault is reproduced against the real server, as
 * porsager/postgres#1192 does: a 1 ms `statement_timeout` from the connection's start cancels the
 * driver's own first query, whose dropped promise then rejects unhandled.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import postgres from 'postgres';
import { postgresDriverFault } from '../admin/postgres-driver-faults.ts';
import { TEST_DATABASE_URL } from './support/db.ts';

/**
 * Runs in a child process: node:test attributes any unhandled rejection in its own process to the
 * running test, and the point here is what the rejection is.
 */
const REPRODUCTION = `
import postgres from 'postgres';
import { postgresDriverFault } from './admin/postgres-driver-faults.ts';
let unhandled = null;
process.on('unhandledRejection', (reason) => { unhandled = reason; });
const sql = postgres(process.env.URL, { max: 1, connection: { statement_timeout: 1 }, onnotice: () => {} });
const first = await sql\`select 1 as one\`.then(() => 'ok', (err) => err.code);
for (let i = 0; i < 40 && unhandled === null; i++) await new Promise((r) => setTimeout(r, 25));
await sql.end({ timeout: 1 });
console.log(JSON.stringify({ first, unhandled: unhandled?.code ?? null, fault: postgresDriverFault(unhandled) }));
`;

test('the array-type fetch a new connection runs first fails unhandled, and is recognised as that fault', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', REPRODUCTION], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, URL: TEST_DATABASE_URL },
    encoding: 'utf8',
    timeout: 20_000,
  });
  const seen = JSON.parse(out.trim().split('\n').at(-1)!) as { first: string; unhandled: string | null; fault: string | null };
  assert.equal(seen.first, '57014', 'the query waiting behind the cancelled fetch fails with it');
  assert.equal(seen.unhandled, '57014', 'postgres.js left the fetch rejection unhandled (if an upgrade fixed porsager/postgres#1192, this test and the fault can go)');
  assert.equal(seen.fault, 'array-type-fetch');
});

test('any other PostgreSQL error, or any other error, is not a known fault', async () => {
  const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {} });
  try {
    const err = await sql`select * from no_such_table_here`.catch((e: unknown) => e);
    assert.equal((err as { name?: string }).name, 'PostgresError');
    assert.equal(postgresDriverFault(err), null);
    const typeQueryLookalike = Object.assign(new Error('boom'), { name: 'PostgresError', query: 'select b.oid from pg_catalog.pg_type b' });
    assert.equal(postgresDriverFault(typeQueryLookalike), null, 'only the driver\'s own query');
  } finally {
    await sql.end({ timeout: 1 });
  }
  assert.equal(postgresDriverFault(new TypeError('x is not a function')), null);
  assert.equal(postgresDriverFault('a string'), null);
});

test('a stray write on a closed connection (porsager/postgres#1208) is recognised by its stack', () => {
  const err = new TypeError("Cannot read properties of null (reading 'write')");
  err.stack = `${err.message}\n    at nextWrite (file:///app/node_modules/postgres/src/connection.js:250:12)`;
  assert.equal(postgresDriverFault(err), 'closed-socket-write');
});

test('a connection error raised from postgres.js\'s closed() with no handler left is recognised (seen in CI under terminated backends)', () => {
  // As admin logged it in CI: message, code and stack of postgres.js's Errors.connection from closed().
  const err = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED', errno: 'CONNECTION_CLOSED', address: '127.0.0.1', port: 5432 });
  err.stack = `${err.message}\n    at Socket.closed (file:///tmp/repo/node_modules/postgres/src/connection.js:453:57)\n    at Socket.emit (node:events:524:28)\n    at TCP.<anonymous> (node:net:343:12)`;
  assert.equal(postgresDriverFault(err), 'connection-closed');
  const elsewhere = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
  elsewhere.stack = `${elsewhere.message}\n    at closed (file:///app/admin/db.ts:10:3)`;
  assert.equal(postgresDriverFault(elsewhere), null, 'only postgres.js\'s own');
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  reset.stack = `${reset.message}\n    at Socket.closed (file:///app/node_modules/postgres/src/connection.js:453:57)`;
  assert.equal(postgresDriverFault(reset), null, 'only CONNECTION_CLOSED');
});
