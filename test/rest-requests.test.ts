/**
 * REST API: logged requests (`POST /v1/request/query`, `GET /v1/request/{id}/inputs`), scores
 * (`POST /v1/evals/{id}`) and datasets (`/v1/experiment/dataset/...`) over real HTTP on a fresh
 * database: success shapes against the reference schemas, validation, 401, 404, 413, malformed
 * JSON, 503 when the database is down, isolation between organizations and transaction rollback.
 * Run: node --import tsx --test test/rest-requests.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import postgres from 'postgres';
import { buildConfig } from '../shared/config.ts';
import { createApp } from '../admin/app.ts';
import type { Sql } from '../admin/db.ts';
import { assertDocumented, assertError, assertSchema, call, chatBody, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
let ids: string[] = [];
let promptId = '';
let versionId = '';

before(async () => {
  env = await startRest({ maxBodyBytes: 64 * 1024 });
  const created = (await call(env, 'POST', '/v1/prompt-2025', { name: 'inputs', tags: [], promptBody: chatBody() })).body;
  promptId = created.id;
  versionId = created.versionId;
  ids = await ingest(env, env.orgA, [
    logRecord(env.orgA, { userId: 'u1', delayMs: 300, usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
    logRecord(env.orgA, { userId: 'u2', delayMs: 100, usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } }),
    logRecord(env.orgA, {
      userId: 'u3',
      delayMs: 200,
      usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
      prompt: { promptId, versionId, version: '0.0', environment: 'production', inputs: { name: 'Ada', n: 3 } },
    }),
  ]);
  await ingest(env, env.orgB, [logRecord(env.orgB, { userId: 'b1' })]);
});
after(async () => {
  await env?.close();
});

const query = (body: unknown, key?: string | null) => call(env, 'POST', '/v1/request/query', body, key);
const requestIds = (r: { body: { data: Array<{ request_id: string }> } }) => r.body.data.map((x) => x.request_id);

describe('POST /v1/request/query', () => {
  test('returns SvcRequest records, newest first, scoped to the organization', async () => {
    const r = await query({ filter: 'all' });
    assertDocumented('POST', '/v1/request/query', r, 'ResultSuccess_SvcRequest-Array_');
    assert.deepEqual(requestIds(r), [...ids].reverse());
    for (const rec of r.body.data) assertSchema('SvcRequest', rec);
    const b = await query({ filter: 'all' }, env.keyB);
    assert.equal(b.body.data.length, 1);
    assert.equal(b.body.data[0].request_user_id, 'b1');
  });

  test('offset, limit and sort', async () => {
    assert.deepEqual(requestIds(await query({ filter: 'all', limit: 1 })), [ids[2]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', limit: 1, offset: 1 })), [ids[1]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', offset: 3 })), []);
    assert.deepEqual(requestIds(await query({ filter: 'all', sort: { created_at: 'asc' } })), ids);
    assert.deepEqual(requestIds(await query({ filter: 'all', sort: { latency: 'asc' } })), [ids[1], ids[2], ids[0]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', sort: { total_tokens: 'desc' } })), [ids[1], ids[2], ids[0]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', sort: { user_id: 'desc' } })), [ids[2], ids[1], ids[0]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', sort: { random: true } })).sort(), [...ids].sort());
  });

  test('isScored and isPartOfExperiment; isCached matches nothing', async () => {
    await call(env, 'POST', `/v1/evals/${ids[0]}`, { name: 'q', score: 1 });
    assert.deepEqual(requestIds(await query({ filter: 'all', isScored: true })), [ids[0]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', isScored: false })), [ids[2], ids[1]]);
    const ds = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'one', filter: { request: { user_id: { equals: 'u2' } } } });
    assert.equal(ds.status, 200);
    assert.deepEqual(requestIds(await query({ filter: 'all', isPartOfExperiment: true })), [ids[1]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', isPartOfExperiment: false })), [ids[2], ids[0]]);
    assert.deepEqual(requestIds(await query({ filter: 'all', isCached: true })), []);
    assert.equal(requestIds(await query({ filter: 'all', isCached: false, includeInputs: true })).length, 3);
  });

  test('validation: 400 naming the field, never a 500', async () => {
    assertError(await query({}), 400, /filter: required/);
    // One message per problem: a missing filter is "required" once, then what is expected.
    assert.equal((await query({})).body.error, 'invalid body: filter: required, expected a filter ("all", a leaf or a branch)');
    assert.equal((await query({ filter: undefined, limit: 5 })).body.error, 'invalid body: filter: required, expected a filter ("all", a leaf or a branch)');
    assert.equal((await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: 1 })).body.error, 'invalid body: name: required, expected a string');
    assertError(await query({ filter: 'all', limit: 10_001 }), 400, /limit/);
    assertError(await query({ filter: 'all', limit: 1.5 }), 400, /limit/);
    assertError(await query({ filter: 'all', offset: -1 }), 400, /offset/);
    assertError(await query({ filter: 'all', offset: 1e20 }), 400, /offset/);
    assertError(await query({ filter: 'all', offset: '1' }), 400, /offset/);
    assertError(await query({ filter: 'all', sort: { created_at: 'up' } }), 400, /sort\.created_at/);
    assertError(await query({ filter: 'all', sort: { properties: {} } }), 400, /sort\.properties: unknown key/);
    assertError(await query({ filter: 'all', sort: { random: false } }), 400, /sort\.random/);
    assertError(await query({ filter: 'all', extra: 1 }), 400, /extra: unknown key/);
    assertError(await query({ filter: 'all', isScored: 'yes' }), 400, /isScored/);
    // Objects superstruct cannot print (found by the fuzz run): first failure elsewhere, or this one.
    assertError(await query({ filter: { left: 'all', operator: '', right: 'all' }, offset: { toString: 0 } }), 400, /filter/);
    assertError(await query({ filter: 'all', offset: { toString: 0, valueOf: 0 } }), 400, /toString/);
    assertError(await query([]), 400);
    assertError(await query('null'), 400);
    assertError(await query('{"filter": "all",'), 400, /malformed JSON/);
    assertError(await query({ filter: 'all' }, null), 401);
    assertError(await query({ filter: 'all' }, 'sk-svc-nope'), 401);
    // Offsets PostgreSQL refuses (beyond ±15:59) were a 500 (time zone displacement out of range).
    for (const offset of ['+16:00', '+23:59', '-16:00']) {
      assertError(await query({ filter: { request: { created_at: { gt: `2025-01-01T00:00:00${offset}` } } } }), 400, /created_at/);
    }
    assert.equal((await query({ filter: { request: { created_at: { gt: '2025-01-01T00:00:00+15:59' } } } })).status, 200);
  });

  test('a body over the configured limit is 413', async () => {
    assertError(await query({ filter: 'all', pad: 'x'.repeat(70 * 1024) }), 413);
    assertError(await call(env, 'POST', '/v1/prompt-2025', { name: 'x', tags: [], promptBody: chatBody('y'.repeat(70 * 1024)) }), 413);
  });
});

describe('GET /v1/request/{id}/inputs', () => {
  test('inputs of a request made through gateway prompt management', async () => {
    const r = await call(env, 'GET', `/v1/request/${ids[2]}/inputs`);
    assertDocumented('GET', '/v1/request/{requestId}/inputs', r, 'ResultSuccess__inputs-Record_string.any_--prompt_id-string--version_id-string--environment-string-or-null_-or-null_');
    assert.deepEqual(r.body, { data: { inputs: { name: 'Ada', n: 3 }, prompt_id: promptId, version_id: versionId, environment: 'production' }, error: null });
  });

  test('data null otherwise: no prompt, unknown id, malformed id, another organization', async () => {
    for (const path of [`/v1/request/${ids[0]}/inputs`, `/v1/request/${randomUUID()}/inputs`, '/v1/request/nope/inputs']) {
      const r = await call(env, 'GET', path);
      assert.equal(r.status, 200);
      assert.equal(r.text, '{"data":null,"error":null}');
      assertDocumented('GET', '/v1/request/{requestId}/inputs', r);
    }
    const other = await call(env, 'GET', `/v1/request/${ids[2]}/inputs`, undefined, env.keyB);
    assert.deepEqual(other.body, { data: null, error: null });
    assertError(await call(env, 'GET', `/v1/request/${ids[2]}/inputs`, undefined, null), 401);
  });
});

describe('POST /v1/evals/{requestId}', () => {
  test('stores a score; the same name replaces it; GET /v1/request/{id} shows scores', async () => {
    const r = await call(env, 'POST', `/v1/evals/${ids[1]}`, { score: 0.5, name: 'accuracy' });
    assertDocumented('POST', '/v1/evals/{requestId}', r, 'ResultSuccess_null_');
    assert.deepEqual(r.body, { data: null, error: null });
    await call(env, 'POST', `/v1/evals/${ids[1]}`, { score: 7, name: 'helpfulness' });
    await call(env, 'POST', `/v1/evals/${ids[1]}`, { score: 0.75, name: 'accuracy' });
    const rec = await call(env, 'GET', `/v1/request/${ids[1]}`);
    assertDocumented('GET', '/v1/request/{requestId}', rec, 'ResultSuccess_SvcRequest_');
    assert.deepEqual(rec.body.data.scores, { accuracy: 0.75, helpfulness: 7 });
  });

  test('unknown, malformed and foreign request ids are 404; validation 400; 401', async () => {
    assertError(await call(env, 'POST', `/v1/evals/${randomUUID()}`, { score: 1, name: 'x' }), 404);
    assertError(await call(env, 'POST', '/v1/evals/not-a-uuid', { score: 1, name: 'x' }), 404);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: 1, name: 'x' }, env.keyB), 404);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: '1', name: 'x' }), 400, /score/);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { name: 'x' }), 400, /score: required/);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: 1 }), 400, /name: required/);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: 1, name: '' }), 400, /name/);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: 1, name: 'x'.repeat(300) }), 400, /name/);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, { score: 1, name: 'x' }, null), 401);
    // 1e400 is legal JSON that JSON.parse reads as Infinity: stored, it came back as the string "Infinity".
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, '{"score":1e400,"name":"inf"}'), 400, /^invalid body: score: a number too large for a double/);
    assertError(await call(env, 'POST', `/v1/evals/${ids[0]}`, '{"score":-1e400,"name":"inf"}'), 400, /score/);
    assert.deepEqual(Object.keys((await call(env, 'GET', `/v1/request/${ids[0]}`)).body.data.scores ?? {}).filter((k) => k === 'inf'), []);
    const [{ count }] = await env.db.sql<{ count: number }[]>`select count(*)::int as count from request_score where organization_id = ${env.orgB}`;
    assert.equal(count, 0);
  });
});

describe('POST /v1/request/{requestId}/score (the reference\'s AddScores)', () => {
  const score = (id: string, body: unknown, key?: string | null) => call(env, 'POST', `/v1/request/${id}/score`, body, key);

  test('stores several scores at once, booleans as 1 and 0, replacing a name already scored', async () => {
    const r = await score(ids[2]!, { scores: { quality: 0.25, correct: true, toxic: false } });
    assertDocumented('POST', '/v1/request/{requestId}/score', r, 'Result_null.string_');
    assert.deepEqual(r.body, { data: null, error: null });
    assert.deepEqual((await score(ids[2]!, { scores: { quality: 0.5 } })).status, 200);
    const rec = (await call(env, 'GET', `/v1/request/${ids[2]}`)).body.data;
    assert.deepEqual(rec.scores, { quality: 0.5, correct: 1, toxic: 0 });
  });

  test('404 for an unknown, malformed or foreign request (nothing stored); 400 naming what is wrong; 401', async () => {
    assertError(await score(randomUUID(), { scores: { a: 1 } }), 404, /not found/);
    assertError(await score('not-a-uuid', { scores: { a: 1 } }), 404);
    assertError(await score(ids[2]!, { scores: { foreign: 1 } }, env.keyB), 404);
    assert.equal((await call(env, 'GET', `/v1/request/${ids[2]}`)).body.data.scores.foreign, undefined);
    assertError(await score(ids[2]!, {}), 400, /scores: required/);
    assertError(await score(ids[2]!, { scores: {} }), 400, /scores: expected 1 to 100 named scores, got 0/);
    assertError(await score(ids[2]!, { scores: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`s${i}`, i])) }), 400, /got 101/);
    assertError(await score(ids[2]!, { scores: { a: '1' } }), 400, /scores\.a/);
    assertError(await score(ids[2]!, { scores: { a: null } }), 400, /scores\.a/);
    assertError(await score(ids[2]!, '{"scores":{"a":1e400}}'), 400, /scores\.a: a number too large/);
    assertError(await score(ids[2]!, { scores: { ['x'.repeat(257)]: 1 } }), 400, /scores/);
    assertError(await score(ids[2]!, { scores: { a: 1 }, extra: 1 }), 400, /extra: unknown key/);
    assertError(await score(ids[2]!, { scores: { a: 1 } }, null), 401);
  });
});

describe('datasets', () => {
  test('random dataset of the matching requests; its rows; the dataset list', async () => {
    const r = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'u1-or-u3', filter: { left: { request: { user_id: { equals: 'u1' } } }, operator: 'or', right: { request: { user_id: { equals: 'u3' } } } } });
    assertDocumented('POST', '/v1/experiment/dataset/random', r, 'ResultSuccess__datasetId-string__');
    const datasetId = r.body.data.datasetId as string;
    const rows = await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/query`, {});
    assertDocumented('POST', '/v1/experiment/dataset/{datasetId}/query', rows);
    assert.deepEqual(rows.body.data.map((x: { request_id: string }) => x.request_id).sort(), [ids[0], ids[2]].sort());
    assert.deepEqual(rows.body.data.map((x: { position: number }) => x.position), [0, 1]);
    assert.equal(rows.body.data[0].request_body.messages.length, 2);
    assert.equal(rows.body.data[0].response_body.choices[0].message.content, 'Paris.');
    const paged = await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/query`, { offset: 1, limit: 1 });
    assert.deepEqual(paged.body.data.map((x: { position: number }) => x.position), [1]);
    const emptyBody = await fetch(`${env.url}/v1/experiment/dataset/${datasetId}/query`, { method: 'POST', headers: { authorization: `Bearer ${env.keyA}` } });
    assert.equal(emptyBody.status, 200, 'an empty body is allowed');

    const list = await call(env, 'POST', '/v1/experiment/dataset/query', {});
    assertDocumented('POST', '/v1/experiment/dataset/query', list, 'ResultSuccess_DatasetResult-Array_');
    assert.ok(list.body.data.some((d: { id: string; name: string }) => d.id === datasetId && d.name === 'u1-or-u3'));
    const byVersion = await call(env, 'POST', '/v1/experiment/dataset/query', { promptVersionId: versionId });
    assert.deepEqual(byVersion.body.data.map((d: { id: string }) => d.id), [datasetId]);
    assert.deepEqual((await call(env, 'POST', '/v1/experiment/dataset/query', { promptVersionId: 'zzz' })).body.data, []);
    assert.deepEqual((await call(env, 'POST', '/v1/experiment/dataset/query', {}, env.keyB)).body.data, [], "org B sees none of A's datasets");

    // The reference's GetDataset: the rows as PromptInputRecord, with each request's prompt inputs.
    const inputs = await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/inputs/query`, {});
    assertDocumented('POST', '/v1/experiment/dataset/{datasetId}/inputs/query', inputs, 'Result_PromptInputRecord-Array.string_');
    const byRequest = new Map(inputs.body.data.map((x: Record<string, any>) => [x.source_request, x]));
    assert.deepEqual([...byRequest.keys()].sort(), [ids[0], ids[2]].sort());
    const prompted = byRequest.get(ids[2]) as Record<string, any>;
    assert.deepEqual(prompted.inputs, { name: 'Ada', n: '3' }, 'inputs as text');
    assert.equal(prompted.prompt_version, versionId);
    assert.equal(JSON.parse(prompted.request_body).messages.length, 2);
    const plain = byRequest.get(ids[0]) as Record<string, any>;
    assert.deepEqual([plain.inputs, plain.prompt_version, plain.auto_prompt_inputs], [{}, '', []]);
    assert.equal((await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/inputs/query`, { offset: 1, limit: 1 })).body.data.length, 1);
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/inputs/query`, {}, env.keyB), 404);
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${randomUUID()}/inputs/query`, {}), 404);
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${datasetId}/inputs/query`, { limit: 0 }), 400, /limit/);
  });

  test('offset and limit of the random sample; no match gives an empty dataset', async () => {
    const make = async (body: Record<string, unknown>) => {
      const r = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'sample', filter: 'all', ...body });
      assert.equal(r.status, 200, r.text);
      const rows = await call(env, 'POST', `/v1/experiment/dataset/${r.body.data.datasetId}/query`, { limit: 10_000 });
      return rows.body.data.map((x: { request_id: string }) => x.request_id) as string[];
    };
    assert.deepEqual((await make({})).sort(), [...ids].sort(), 'default limit 100 takes all three');
    const two = await make({ limit: 2 });
    assert.equal(two.length, 2);
    assert.equal(new Set(two).size, 2);
    assert.ok(two.every((id) => ids.includes(id)));
    assert.equal((await make({ offset: 2 })).length, 1);
    assert.deepEqual(await make({ offset: 3 }), []);
    assert.deepEqual(await make({ filter: { request: { user_id: { equals: 'b1' } } } }), [], "org B's request is not sampled");
  });

  test('validation: 400 for missing, wrong or extra members; 401; 404 for unknown datasets', async () => {
    const post = (body: unknown, key?: string | null) => call(env, 'POST', '/v1/experiment/dataset/random', body, key);
    assertError(await post({ filter: 'all' }), 400, /datasetName: required/);
    assertError(await post({ datasetName: 'x' }), 400, /filter: required/);
    assertError(await post({ datasetName: 'x', filter: 'all', extra: true }), 400, /extra: unknown key/);
    assertError(await post({ datasetName: 'x', filter: 'all', limit: 10_001 }), 400, /limit/);
    assertError(await post({ datasetName: 'x', filter: 'all', offset: -5 }), 400, /offset/);
    assertError(await post({ datasetName: 7, filter: 'all' }), 400, /datasetName/);
    assertError(await post({ datasetName: 'x', filter: { request: { created_at: { gte: 'soon' } } } }), 400, /filter\.request\.created_at\.gte/);
    assertError(await post({ datasetName: 'x', filter: 'all' }, null), 401);
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${randomUUID()}/query`, {}), 404);
    assertError(await call(env, 'POST', '/v1/experiment/dataset/nope/query', {}), 404);
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${randomUUID()}/query`, { extra: 1 }), 400, /extra/);
    const mine = (await post({ datasetName: 'mine', filter: 'all' })).body.data.datasetId;
    assertError(await call(env, 'POST', `/v1/experiment/dataset/${mine}/query`, {}, env.keyB), 404);
    assertError(await call(env, 'POST', '/v1/experiment/dataset/query', { promptVersionId: 5 }), 400, /promptVersionId/);
    assertError(await call(env, 'POST', '/v1/experiment/dataset/query', {}, null), 401);
  });

  test('a failing row insert leaves no dataset behind', async () => {
    const sql = env.db.sql;
    await sql.unsafe(`create or replace function test_fail() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`);
    await sql.unsafe('create trigger test_fail_rows before insert on dataset_row for each row execute function test_fail()');
    try {
      const r = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'must-not-exist', filter: 'all' });
      assert.equal(r.status, 500);
    } finally {
      await sql.unsafe('drop trigger test_fail_rows on dataset_row');
    }
    assert.equal((await sql`select id from dataset where name = 'must-not-exist'`).length, 0);
  });
});

describe('database unavailable', () => {
  test('503 with the envelope, not 500', async () => {
    const sql = postgres('postgres://postgres@127.0.0.1:1/none', { max: 1, connect_timeout: 2, onnotice: () => {} }) as unknown as Sql;
    const app = createApp({ sql, config: buildConfig({}), logger: pino({ level: 'silent' }), health: () => ({}) });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const res = await fetch(`${url}/v1/request/query`, { method: 'POST', headers: { authorization: `Bearer ${env.keyA}` }, body: '{"filter":"all"}' });
      assert.equal(res.status, 503);
      assert.equal(((await res.json()) as { data: unknown }).data, null);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await sql.end({ timeout: 1 });
    }
  });
});
