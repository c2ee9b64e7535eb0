/**
 * admin/postgres-driver-faults.ts tells the postgres.js faults admin survives from every other
 * uncaught exception. The array-type fetch's fault is reproduced against the real server twice: as
 * porsager/postgres#1192 does (a 1 ms `statement_timeout` from the connection's start cancels the
 * driver's own first query, whose dropped promise then rejects unhandled), and as CI met it (the
 * backend terminated as the connection starts, its FATAL read together with the ReadyForQuery).
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

/** What a reproduction script printed last: the caller's query's outcome, the unhandled rejection's code, and the fault it was recognised as. */
function reproduce(script: string): { first: string; unhandled: string | null; fault: string | null } {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: { ...process.env, URL: TEST_DATABASE_URL },
    encoding: 'utf8',
    timeout: 20_000,
  });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { first: string; unhandled: string | null; fault: string | null };
}

test('the array-type fetch a new connection runs first fails unhandled, and is recognised as that fault', () => {
  const seen = reproduce(REPRODUCTION);
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

/**
 * The same fault failing with `CONNECTION_CLOSED` (seen in CI under terminated backends): a proxy
 * between the driver and the server holds the new connection's startup ReadyForQuery, terminates
 * that backend (its own only), and delivers the ReadyForQuery and the FATAL in one write, as a busy
 * event loop reads them. The FATAL fails the caller's query; the deferred array-type fetch then
 * starts on the dying connection and its close rejects it, unhandled.
 */
const ONE_READ_REPRODUCTION = `
import net from 'node:net';
import postgres from 'postgres';
import { postgresDriverFault } from './admin/postgres-driver-faults.ts';
let unhandled = null;
process.on('unhandledRejection', (reason) => { unhandled = reason; });
const killer = postgres(process.env.URL, { max: 1, onnotice: () => {} });
const target = new URL(process.env.URL);
const proxy = net.createServer((client) => {
  const server = net.connect(Number(target.port || 5432), target.hostname);
  client.pipe(server);
  // Everything the server says is held until it closes, then written at once.
  const held = [];
  let pid = null;
  let terminating = false;
  server.on('data', async (chunk) => {
    held.push(chunk);
    const buf = Buffer.concat(held);
    for (let i = 0; i + 5 <= buf.length; ) {
      const type = String.fromCharCode(buf[i]);
      if (type === 'K') pid = buf.readInt32BE(i + 5);
      if (type === 'Z' && pid !== null && !terminating) {
        terminating = true;
        await killer\`select pg_terminate_backend(\${pid})\`;
      }
      i += 1 + buf.readUInt32BE(i + 1);
    }
  });
  server.on('end', () => client.end(Buffer.concat(held)));
  server.on('error', () => client.destroy());
  client.on('error', () => server.destroy());
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
const url = new URL(process.env.URL);
url.hostname = '127.0.0.1';
url.port = String(proxy.address().port);
const sql = postgres(url.href, { max: 1, onnotice: () => {} });
const first = await sql\`select 1 as one\`.then(() => 'ok', (err) => err.code);
for (let i = 0; i < 40 && unhandled === null; i++) await new Promise((r) => setTimeout(r, 25));
await killer.end({ timeout: 1 });
proxy.close();
await sql.end({ timeout: 0 }).catch(() => {});
console.log(JSON.stringify({ first, unhandled: unhandled?.code ?? null, fault: postgresDriverFault(unhandled) }));
`;

test('the array-type fetch failed by its connection closing (CONNECTION_CLOSED, unhandled) is recognised as that fault', () => {
  const seen = reproduce(ONE_READ_REPRODUCTION);
  assert.equal(seen.first, '57P01', "the caller's query fails with the backend's termination");
  assert.equal(seen.unhandled, 'CONNECTION_CLOSED', 'postgres.js left the fetch rejection unhandled');
  assert.equal(seen.fault, 'array-type-fetch');
});

test('a connection error is a known fault only when it failed the array-type fetch', () => {
  const fetchQuery = '\n      select b.oid, b.typarray\n      from pg_catalog.pg_type a\n      left join pg_catalog.pg_type b on b.oid = a.typelem';
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', query: fetchQuery });
  assert.equal(postgresDriverFault(reset), 'array-type-fetch', 'the socket error on the same path');
  // A user query's CONNECTION_CLOSED with no handler is admin's own bug: it must stop admin.
  const userQuery = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED', query: 'select 1' });
  userQuery.stack = `${userQuery.message}\n    at Socket.closed (file:///app/node_modules/postgres/src/connection.js:453:57)`;
  assert.equal(postgresDriverFault(userQuery), null);
  const bare = Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' });
  assert.equal(postgresDriverFault(bare), null);
});
