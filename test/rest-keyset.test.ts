/**
 * Keyset paging of `POST /v1/request/query` (`before`), `POST /v1/request/count`, and migration
 * 00005's index, on a fresh database: pages chained by `before` cover the log exactly once in the
 * default order (ties on created_at broken by id), with a filter too; `before` with `offset` or
 * `sort` and malformed cursors are 400s naming the member; counts follow the filter and flags and
 * stay within the organization; the row comparison is an index condition.
 * Run: node --import tsx --test test/rest-keyset.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { migrate } from '../admin/db.ts';
import { assertDocumented, assertError, call, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
/** Organization A's request ids in the default order (created_at desc, id desc). */
let ordered: string[] = [];
/** Their users, by id. */
const userOf = new Map<string, string>();

before(async () => {
  env = await startRest();
  const base = Date.parse('2025-04-01T00:00:00Z');
  const records = [];
  for (let i = 0; i < 23; i++) {
    // Groups of three rows share a created_at, so the id decides their order.
    const rec = logRecord(env.orgA, { createdAt: base + Math.floor(i / 3) * 1000, userId: i % 2 ? 'odd' : 'even' });
    records.push(rec);
    userOf.set(rec.requestId, rec.userId!);
  }
  await ingest(env, env.orgA, records);
  await ingest(env, env.orgB, [logRecord(env.orgB, { createdAt: base })]);
  ordered = records
    .slice()
    .sort((a, b) => b.createdAt - a.createdAt || (a.requestId < b.requestId ? 1 : a.requestId > b.requestId ? -1 : 0))
    .map((r) => r.requestId);
});
after(async () => {
  await env?.close();
});

/** Pages through `filter` with `limit`, chaining `before` from each page's last row. */
async function pageThrough(filter: unknown, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: { created_at: string; request_id: string } | undefined;
  let pages = 0;
  for (;;) {
    const r = await call(env, 'POST', '/v1/request/query', { filter, limit, ...(cursor ? { before: cursor } : {}) });
    assertDocumented('POST', '/v1/request/query', r);
    pages++;
    const rows = r.body.data as Array<{ request_id: string; request_created_at: string }>;
    ids.push(...rows.map((x) => x.request_id));
    if (rows.length < limit) return { ids, pages };
    const last = rows.at(-1)!;
    cursor = { created_at: last.request_created_at, request_id: last.request_id };
    assert.ok(pages < 100, 'paging ends');
  }
}

describe('POST /v1/request/query with before (keyset paging)', () => {
  test('chained pages cover the log exactly once, in the default order, ties broken by id', async () => {
    for (const limit of [1, 3, 5, 7, 23, 100]) {
      const { ids } = await pageThrough('all', limit);
      assert.deepEqual(ids, ordered, `limit ${limit}`);
    }
    const first = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 5 });
    assert.deepEqual(first.body.data.map((x: { request_id: string }) => x.request_id), ordered.slice(0, 5), 'no before: the first page');
  });

  test('with a filter: only the matching rows, each once', async () => {
    const { ids } = await pageThrough({ request: { user_id: { equals: 'odd' } } }, 4);
    assert.deepEqual(ids, ordered.filter((id) => userOf.get(id) === 'odd'));
  });

  test('strictly after the cursor row: the row itself and newer rows never come back', async () => {
    const at = 10;
    const row = (await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 100 })).body.data[at];
    const r = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 100, before: { created_at: row.request_created_at, request_id: row.request_id.toUpperCase() } });
    assert.deepEqual(r.body.data.map((x: { request_id: string }) => x.request_id), ordered.slice(at + 1));
    // A cursor need not be a stored row: any instant and id place it in the order.
    const r2 = await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { created_at: '2025-04-01T00:00:02.500+00:00', request_id: '00000000-0000-4000-8000-000000000000' } });
    assert.deepEqual(r2.body.data.map((x: { request_id: string }) => x.request_id), ordered.slice(-9), 'the rows at 00:00:02 and before');
    const past = await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { created_at: '2000-01-01', request_id: ordered[0] } });
    assert.deepEqual(past.body.data, []);
  });

  test('another organization never sees a row through a cursor', async () => {
    const r = await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { created_at: '2030-01-01T00:00:00Z', request_id: ordered[0] } }, env.keyB);
    assert.equal(r.body.data.length, 1);
    assert.ok(!ordered.includes(r.body.data[0].request_id));
  });

  test('before with offset or sort, and malformed cursors, are 400s naming the member', async () => {
    const cursor = { created_at: '2025-04-01T00:00:05Z', request_id: ordered[0] };
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: cursor, offset: 0 }), 400, /before: cannot be combined with offset/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: cursor, offset: 5 }), 400, /before: cannot be combined with offset/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: cursor, sort: { created_at: 'desc' } }), 400, /before: cannot be combined with sort/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: cursor, sort: { latency: 'asc' } }), 400, /before: cannot be combined with sort/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { ...cursor, created_at: 'yesterday' } }), 400, /before\.created_at: expected an ISO-8601/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { ...cursor, created_at: 5 } }), 400, /before\.created_at/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { ...cursor, request_id: 'abc' } }), 400, /before\.request_id: expected a request id/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { created_at: cursor.created_at } }), 400, /before\.request_id: required/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: { ...cursor, id: 'x' } }), 400, /before\.id: unknown key/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: 'now' }), 400, /before/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', before: null }), 400, /before/);
  });
});

describe('POST /v1/request/count', () => {
  test('counts the matching requests of the organization', async () => {
    const all = await call(env, 'POST', '/v1/request/count', { filter: 'all' });
    assertDocumented('POST', '/v1/request/count', all);
    assert.deepEqual(all.body, { data: 23, error: null });
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: { request: { user_id: { equals: 'odd' } } } })).body.data, 11);
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: { request: { user_id: { equals: 'nobody' } } } })).body.data, 0);
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all' }, env.keyB)).body.data, 1);
  });

  test('the flags of /v1/request/query: isScored, isPartOfExperiment, isCached', async () => {
    await call(env, 'POST', `/v1/evals/${ordered[0]}`, { name: 'q', score: 1 });
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all', isScored: true })).body.data, 1);
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all', isScored: false })).body.data, 22);
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all', isPartOfExperiment: true })).body.data, 0);
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all', isCached: true, includeInputs: true })).body.data, 0);
  });

  test('400 for a missing or invalid filter and for paging members; 401 without a key', async () => {
    assertError(await call(env, 'POST', '/v1/request/count', {}), 400, /filter/);
    assertError(await call(env, 'POST', '/v1/request/count', { filter: { request: { user_id: { near: 'x' } } } }), 400, /filter\.request\.user_id\.near: unknown text operator/);
    assertError(await call(env, 'POST', '/v1/request/count', { filter: 'all', limit: 5 }), 400, /limit: unknown key/);
    assertError(await call(env, 'POST', '/v1/request/count', { filter: 'all', sort: { created_at: 'asc' } }), 400, /sort: unknown key/);
    assertError(await call(env, 'POST', '/v1/request/count', '{"filter":'), 400, /malformed JSON/);
    assertError(await call(env, 'POST', '/v1/request/count', { filter: 'all' }, null), 401);
  });
});

describe('migration 00005', () => {
  test('(organization_id, created_at desc, id desc) is indexed, its prefix index is gone, and the row comparison is an index condition', async () => {
    const sql = env.db.sql;
    const indexes = await sql<{ indexname: string; indexdef: string }[]>`select indexname, indexdef from pg_indexes where tablename = 'request_log'`;
    const keyset = indexes.find((i) => i.indexname === 'request_log_org_created_id_idx');
    assert.match(keyset?.indexdef ?? '', /\(organization_id, created_at DESC, id DESC\)/);
    assert.equal(indexes.find((i) => i.indexname === 'request_log_org_created_idx'), undefined);
    const plan = await sql.begin(async (t) => {
      const tx = t as unknown as typeof sql;
      await tx`set local enable_seqscan = off`;
      await tx`set local enable_bitmapscan = off`;
      return tx<{ 'QUERY PLAN': string }[]>`
        explain select r.id from request_log r
        where r.organization_id = ${env.orgA} and (r.created_at, r.id) < (${'2025-04-01T00:00:05Z'}::timestamptz, ${ordered[0]!}::uuid)
        order by r.created_at desc, r.id desc limit 10`;
    });
    const text = (plan as Array<{ 'QUERY PLAN': string }>).map((r) => r['QUERY PLAN']).join('\n');
    assert.match(text, /Index (Only )?Scan using request_log_org_created_id_idx/);
    assert.match(text, /Index Cond: .*ROW\(created_at, id\) < ROW/);
    assert.doesNotMatch(text, /Sort/);
  });

  test('runs again harmlessly', async () => {
    await env.db.sql`delete from migrations where migration_id >= 5`;
    await migrate(env.db.sql);
    const [{ n }] = await env.db.sql<{ n: number }[]>`select count(*)::int as n from migrations where migration_id = 5`;
    assert.equal(n, 1);
  });
});
