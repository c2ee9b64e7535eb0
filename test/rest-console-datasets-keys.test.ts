/**
 * What the web console needs from the dataset and API-key resources, over real HTTP on a fresh
 * database: `POST /v1/experiment/dataset` (the newest requests matching a filter become a dataset,
 * position 0 the newest; its limit and validation), and `GET /v1/api-keys` with the revoked state
 * (`revoked`, `revoked_at`, `?includeRevoked=true`), the key shown once by POST, revocation by DELETE.
 * Run: node --import tsx --test test/rest-console-datasets-keys.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertDocumented, assertError, call, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
/** Organization A's requests, newest first. */
let newest: string[] = [];

before(async () => {
  env = await startRest();
  const base = Date.parse('2025-07-01T00:00:00Z');
  const records = Array.from({ length: 12 }, (_, i) => logRecord(env.orgA, { createdAt: base + i * 1000, userId: i % 3 === 0 ? 'third' : 'other' }));
  await ingest(env, env.orgA, records);
  await ingest(env, env.orgB, [logRecord(env.orgB, { createdAt: base + 100_000, userId: 'third' })]);
  newest = records.map((r) => r.requestId).reverse();
});
after(async () => {
  await env?.close();
});

async function rowsOf(datasetId: string): Promise<string[]> {
  const r = await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/query`, { limit: 10_000 });
  assert.equal(r.status, 200, r.text);
  return r.body.data.map((x: { request_id: string; position: number }, i: number) => {
    assert.equal(x.position, i);
    return x.request_id;
  });
}

describe('POST /v1/experiment/dataset', () => {
  test('the newest matching requests, position 0 the newest; the answer says how many', async () => {
    const r = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'newest thirds', filter: { request: { user_id: { equals: 'third' } } } });
    assertDocumented('POST', '/v1/experiment/dataset', r);
    assert.equal(r.body.data.rows, 4);
    const thirds = newest.filter((_, i) => (11 - i) % 3 === 0);
    assert.deepEqual(await rowsOf(r.body.data.datasetId), thirds);
    const listed = await call(env, 'POST', '/v1/experiment/dataset/query', {});
    assert.ok(listed.body.data.some((d: { id: string; name: string }) => d.id === r.body.data.datasetId && d.name === 'newest thirds'));
  });

  test('limit takes the newest ones; the default takes up to 1000', async () => {
    const r = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'five', filter: 'all', limit: 5 });
    assert.equal(r.body.data.rows, 5);
    assert.deepEqual(await rowsOf(r.body.data.datasetId), newest.slice(0, 5));
    const all = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'all', filter: { request_response_rmt: { status: { equals: 200 } } } });
    assert.equal(all.body.data.rows, 12);
    assert.deepEqual(await rowsOf(all.body.data.datasetId), newest);
  });

  test('no match: an empty dataset; only the caller organization\'s requests', async () => {
    const none = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'none', filter: { request: { user_id: { equals: 'nobody' } } } });
    assert.equal(none.body.data.rows, 0);
    assert.deepEqual(await rowsOf(none.body.data.datasetId), []);
    const b = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'b', filter: 'all' }, env.keyB);
    assert.equal(b.body.data.rows, 1);
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${b.body.data.datasetId}/query`, {}), 404);
  });

  test('400s name the member', async () => {
    const post = (body: unknown) => call(env, 'POST', '/v1/experiment/dataset', body);
    assertError(await post({ filter: 'all' }), 400, /datasetName: required/);
    assertError(await post({ datasetName: '', filter: 'all' }), 400, /datasetName/);
    assertError(await post({ datasetName: 'x'.repeat(201), filter: 'all' }), 400, /datasetName/);
    assert.equal((await post({ datasetName: 'x'.repeat(200), filter: 'all', limit: 1 })).status, 200);
    assertError(await post({ datasetName: 'x' }), 400, /filter/);
    assertError(await post({ datasetName: 'x', filter: { request: { user_id: { near: 'a' } } } }), 400, /filter\.request\.user_id\.near: unknown text operator/);
    assertError(await post({ datasetName: 'x', filter: 'all', limit: 0 }), 400, /limit/);
    assertError(await post({ datasetName: 'x', filter: 'all', limit: 10_001 }), 400, /limit/);
    assertError(await post({ datasetName: 'x', filter: 'all', limit: 1.5 }), 400, /limit/);
    assertError(await post({ datasetName: 'x', filter: 'all', offset: 1 }), 400, /offset: unknown key/);
    assertError(await post({ datasetName: 'a\u0000b', filter: 'all' }), 400, /U\+0000/);
    assertError(await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'x', filter: 'all' }, null), 401);
  });
});

describe('API keys: the revoked state', () => {
  test('POST shows the key once; GET lists id, name, prefix, created_at, last_used_at, revoked, revoked_at, never the key', async () => {
    const created = await call(env, 'POST', '/v1/api-keys', { name: 'console' });
    assertDocumented('POST', '/v1/api-keys', created);
    assert.match(created.body.data.key, /^sk-svc-/);
    const listed = await call(env, 'GET', '/v1/api-keys');
    assertDocumented('GET', '/v1/api-keys', listed);
    const row = listed.body.data.find((k: { id: string }) => k.id === created.body.data.id);
    assert.deepEqual(row, { id: created.body.data.id, name: 'console', prefix: created.body.data.prefix, created_at: created.body.data.created_at, last_used_at: null, revoked: false, revoked_at: null });
    assert.ok(!listed.text.includes(created.body.data.key), 'the key is never listed');
    // The new key works, and its use shows up once written (the REST app here records no use: no keyUsage).
    assert.equal((await call(env, 'GET', '/v1/api-keys', undefined, created.body.data.key)).status, 200);
  });

  test('DELETE revokes: the key is refused, gone from the default list, listed revoked with includeRevoked=true', async () => {
    const created = (await call(env, 'POST', '/v1/api-keys', { name: 'short-lived' })).body.data;
    const before = Date.now();
    assert.deepEqual((await call(env, 'DELETE', `/v1/api-keys/${created.id}`)).body, { data: null, error: null });
    assertError(await call(env, 'GET', '/v1/api-keys', undefined, created.key), 401);
    const live = await call(env, 'GET', '/v1/api-keys');
    assert.ok(!live.body.data.some((k: { id: string }) => k.id === created.id));
    assert.ok(live.body.data.every((k: { revoked: boolean; revoked_at: null }) => k.revoked === false && k.revoked_at === null));
    const all = await call(env, 'GET', '/v1/api-keys?includeRevoked=true');
    assertDocumented('GET', '/v1/api-keys', all);
    const row = all.body.data.find((k: { id: string }) => k.id === created.id);
    assert.equal(row.revoked, true);
    assert.ok(Math.abs(Date.parse(row.revoked_at) - before) < 60_000, row.revoked_at);
    assert.equal(all.body.data.length, live.body.data.length + 1);
    assert.deepEqual((await call(env, 'GET', '/v1/api-keys?includeRevoked=false')).body, live.body);
    assertError(await call(env, 'DELETE', `/v1/api-keys/${created.id}`), 404, /not found/);
  });

  test('includeRevoked: anything but true or false is a 400 naming it; other organizations\' keys never show', async () => {
    assertError(await call(env, 'GET', '/v1/api-keys?includeRevoked=yes'), 400, /includeRevoked: expected true or false/);
    // A name holding U+0000 was a 500 (PostgreSQL's text refuses it); now a 400 naming it.
    assertError(await call(env, 'POST', '/v1/api-keys', { name: 'a\u0000b' }), 400, /^invalid body: name: must not contain the character U\+0000$/);
    assertError(await call(env, 'GET', '/v1/api-keys?includeRevoked=true&includeRevoked=true'), 400, /includeRevoked/);
    const b = await call(env, 'GET', '/v1/api-keys?includeRevoked=true', undefined, env.keyB);
    assert.deepEqual(b.body.data.map((k: { name: string }) => k.name), ['b']);
  });
});
