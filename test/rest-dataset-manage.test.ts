/**
 * Managing a dataset over REST, on a real PostgreSQL database: adding requests by id
 * (`POST /v1/experiment/dataset/{datasetId}/request`), removing one
 * (`DELETE .../{datasetId}/request/{requestId}`), renaming (`PATCH .../{datasetId}`), deleting
 * (`DELETE .../{datasetId}`) and exporting the rows as JSON Lines (`GET .../{datasetId}/export`,
 * a dataset of 2,500 rows read back whole and in order). Every route is scoped to the key's
 * organization: another organization's dataset or request is a 404 and stays as it was.
 * Run: node --import tsx --test test/rest-dataset-manage.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertDocumented, assertError, assertSchema, call, ingest, logRecord, ownDoc, startRest, type RestEnv } from './rest-support.ts';
import { validateSchema } from '../admin/openapi.ts';
import { exportChunks } from '../admin/resources/datasets/export.ts';

let env: RestEnv;
/** Organization A's five requests, oldest first (a[4] the newest). */
let a: string[] = [];
/** Organization B's request. */
let b = '';
/** Organization A's 2,500 requests of user "bulk", oldest first. */
let bulk: string[] = [];

const BULK = 2_500;

before(async () => {
  env = await startRest();
  const base = Date.parse('2025-08-01T00:00:00Z');
  a = await ingest(
    env,
    env.orgA,
    Array.from({ length: 5 }, (_, i) =>
      logRecord(env.orgA, {
        createdAt: base + i * 1000,
        userId: 'few',
        ...(i === 0 ? { prompt: { promptId: randomUUID(), versionId: randomUUID(), version: '1.0', environment: 'production', inputs: { city: 'Paris', n: 3 } } } : {}),
      }),
    ),
  );
  [b] = await ingest(env, env.orgB, [logRecord(env.orgB, { createdAt: base + 10_000, userId: 'few' })]);
  const bulkRecords = Array.from({ length: BULK }, (_, i) =>
    logRecord(env.orgA, { createdAt: base + 100_000 + i * 10, userId: 'bulk', requestBody: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `row ${i}\nwith a newline` }] } }),
  );
  for (let i = 0; i < bulkRecords.length; i += 500) bulk.push(...(await ingest(env, env.orgA, bulkRecords.slice(i, i + 500))));
});
after(async () => {
  await env?.close();
});

const ds = (id: string, rest = '') => `/v1/experiment/dataset/${id}${rest}`;

/** A new dataset of organization A (or of `key`'s) holding the `limit` newest requests of user `user`. */
async function newDataset(user: string, limit: number, key = env.keyA, name = `ds ${user}`): Promise<string> {
  const r = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: name, filter: { request: { user_id: { equals: user } } }, limit }, key);
  assert.equal(r.status, 200, r.text);
  return r.body.data.datasetId;
}

/** The dataset's request ids in order; positions must be 0, 1, 2, … */
async function rowsOf(datasetId: string, key = env.keyA): Promise<string[]> {
  const r = await call(env, 'POST', ds(datasetId, '/query'), { limit: 10_000 }, key);
  assert.equal(r.status, 200, r.text);
  return r.body.data.map((x: { request_id: string; position: number }, i: number) => {
    assert.equal(x.position, i, `position of row ${i}`);
    return x.request_id;
  });
}

describe('POST /v1/experiment/dataset/{datasetId}/request', () => {
  test('appends the requests in the order given, skipping those already present or repeated', async () => {
    const id = await newDataset('few', 2); // a[4], a[3]
    const r = await call(env, 'POST', ds(id, '/request'), { requestIds: [a[0], a[3], a[1]!.toUpperCase(), a[0]] });
    assertDocumented('POST', '/v1/experiment/dataset/{datasetId}/request', r);
    assert.deepEqual(r.body.data, { added: 2, skipped: 2, rows: 4 });
    assert.deepEqual(await rowsOf(id), [a[4], a[3], a[0], a[1]]);
    const again = await call(env, 'POST', ds(id, '/request'), { requestIds: [a[1]] });
    assert.deepEqual(again.body.data, { added: 0, skipped: 1, rows: 4 });
  });

  test("an unknown request or another organization's is a 404 naming it, and nothing is added", async () => {
    const id = await newDataset('few', 1);
    const unknown = randomUUID();
    const r = await call(env, 'POST', ds(id, '/request'), { requestIds: [a[0], b, unknown] });
    assertError(r, 404, new RegExp(`requestIds: 2 requests not found: ${b}, ${unknown}`));
    assert.deepEqual(await rowsOf(id), [a[4]]);
    // Organization B cannot add its request to A's dataset, nor add A's requests to its own.
    assertError(await call(env, 'POST', ds(id, '/request'), { requestIds: [b] }, env.keyB), 404, new RegExp(`dataset ${id} not found`));
    const bId = await newDataset('few', 1, env.keyB);
    assertError(await call(env, 'POST', ds(bId, '/request'), { requestIds: [a[0]] }, env.keyB), 404, /requestIds: 1 request not found/);
    assert.deepEqual(await rowsOf(bId, env.keyB), [b]);
    assert.deepEqual(await rowsOf(id), [a[4]]);
  });

  test('400 names the member; more than 1,000 ids is a 413; no key is a 401', async () => {
    const id = await newDataset('few', 1);
    const post = (body: unknown, key?: string | null) => call(env, 'POST', ds(id, '/request'), body, key);
    assertError(await post({}), 400, /requestIds: required/);
    assertError(await post({ requestIds: [] }), 400, /requestIds: .*at least 1/);
    assertError(await post({ requestIds: 'x' }), 400, /requestIds: /);
    assertError(await post({ requestIds: [a[0], 'not-a-uuid'] }), 400, /requestIds\.1: expected a request id/);
    assertError(await post({ requestIds: [a[0]], extra: 1 }), 400, /extra: unknown key/);
    const many = Array.from({ length: 1001 }, () => randomUUID());
    assertError(await post({ requestIds: many }), 413, /requestIds: at most 1000 ids per call, got 1001/);
    // 1,000 is accepted (all unknown here: a 404, not a 413).
    assertError(await post({ requestIds: many.slice(0, 1000) }), 404, /requestIds: 1000 requests not found: .*and 990 more/);
    assertError(await post({ requestIds: [a[0]] }, null), 401);
    assertError(await call(env, 'POST', ds(randomUUID(), '/request'), { requestIds: [a[0]] }), 404, /dataset .* not found/);
    assertError(await call(env, 'POST', ds('nope', '/request'), { requestIds: [a[0]] }), 404, /dataset "nope" not found/);
    assert.deepEqual(await rowsOf(id), [a[4]]);
  });
});

describe('DELETE /v1/experiment/dataset/{datasetId}/request/{requestId}', () => {
  test('removes the row; the later rows move up so positions stay 0..n-1; the request itself stays', async () => {
    const id = await newDataset('few', 5); // a[4] .. a[0]
    const r = await call(env, 'DELETE', ds(id, `/request/${a[2]}`));
    assertDocumented('DELETE', '/v1/experiment/dataset/{datasetId}/request/{requestId}', r);
    assert.deepEqual(r.body, { data: null, error: null });
    assert.deepEqual(await rowsOf(id), [a[4], a[3], a[1], a[0]]);
    assert.equal((await call(env, 'GET', `/v1/request/${a[2]}`)).status, 200, 'the logged request is kept');
    // Appending after a removal continues after the last position.
    const added = await call(env, 'POST', ds(id, '/request'), { requestIds: [a[2]] });
    assert.deepEqual(added.body.data, { added: 1, skipped: 0, rows: 5 });
    assert.deepEqual(await rowsOf(id), [a[4], a[3], a[1], a[0], a[2]]);
  });

  test("404: a request not in the dataset, an unknown dataset, another organization's dataset (untouched)", async () => {
    const id = await newDataset('few', 2); // a[4], a[3]
    assertError(await call(env, 'DELETE', ds(id, `/request/${a[0]}`)), 404, new RegExp(`request ${a[0]} not found in dataset ${id}`));
    assertError(await call(env, 'DELETE', ds(id, '/request/nope')), 404, /request "nope" not found/);
    assertError(await call(env, 'DELETE', ds(randomUUID(), `/request/${a[4]}`)), 404, /dataset .* not found/);
    assertError(await call(env, 'DELETE', ds(id, `/request/${a[4]}`), undefined, env.keyB), 404, /dataset .* not found/);
    assertError(await call(env, 'DELETE', ds(id, `/request/${a[4]}`), undefined, null), 401);
    assert.deepEqual(await rowsOf(id), [a[4], a[3]]);
  });
});

describe('positions under concurrent changes', () => {
  test('adds and removes at the same time leave positions 0..n-1, each request once', async () => {
    const id = await newDataset('few', 5);
    const adds = Array.from({ length: 6 }, (_, i) => call(env, 'POST', ds(id, '/request'), { requestIds: bulk.slice(i * 20, i * 20 + 20) }));
    const removes = [a[1], a[3]].map((r) => call(env, 'DELETE', ds(id, `/request/${r}`)));
    for (const r of await Promise.all([...adds, ...removes])) assert.equal(r.status, 200, r.text);
    const rows = await rowsOf(id);
    assert.equal(rows.length, 5 - 2 + 120);
    assert.equal(new Set(rows).size, rows.length);
    assert.deepEqual(rows.slice(0, 3), [a[4], a[2], a[0]]);
    // Each call's ids stay together and in their order (one call appends at once).
    for (let i = 0; i < 6; i++) {
      const at = rows.indexOf(bulk[i * 20]!);
      assert.deepEqual(rows.slice(at, at + 20), bulk.slice(i * 20, i * 20 + 20));
    }
  });
});

describe('positions left uneven by older data (a retention delete leaves a gap)', () => {
  test('the export pages through gaps and ties once each; a removal renumbers 0..n-1', async () => {
    const id = await newDataset('few', 5); // a[4] .. a[0] at 0..4
    // A gap (a[3] gone from 1) and a tie (a[1] and a[0] both at 7), as no route writes them.
    await env.db.sql`update dataset_row set position = case request_id when ${a[2]!} then 5 when ${a[1]!} then 7 when ${a[0]!} then 7 else position end where dataset_id = ${id}`;
    await env.db.sql`delete from dataset_row where dataset_id = ${id} and request_id = ${a[3]!}`;
    const tied = [a[1]!, a[0]!].sort();
    const chunks: string[] = [];
    for await (const chunk of exportChunks(env.db.sql, env.orgA, id, 1)) chunks.push(chunk);
    assert.equal(chunks.length, 4, 'one row per page');
    assert.deepEqual(chunks.map((c) => JSON.parse(c).request_id), [a[4], a[2], ...tied]);
    for await (const _ of exportChunks(env.db.sql, env.orgB, id, 1)) assert.fail("another organization's rows are never read");
    await call(env, 'DELETE', ds(id, `/request/${a[4]}`));
    assert.deepEqual(await rowsOf(id), [a[2], ...tied]);
  });
});

describe('PATCH /v1/experiment/dataset/{datasetId}', () => {
  test('renames; 400 names datasetName; another organization gets a 404', async () => {
    const id = await newDataset('few', 1, env.keyA, 'before');
    const r = await call(env, 'PATCH', ds(id), { datasetName: 'after' });
    assertDocumented('PATCH', '/v1/experiment/dataset/{datasetId}', r);
    assertSchema('DatasetResult', r.body.data);
    assert.equal(r.body.data.id, id);
    assert.equal(r.body.data.name, 'after');
    const listed = await call(env, 'POST', '/v1/experiment/dataset/query', {});
    assert.equal(listed.body.data.find((d: { id: string }) => d.id === id).name, 'after');
    assertError(await call(env, 'PATCH', ds(id), { datasetName: '' }), 400, /datasetName/);
    assertError(await call(env, 'PATCH', ds(id), { datasetName: 'x'.repeat(201) }), 400, /datasetName/);
    assertError(await call(env, 'PATCH', ds(id), {}), 400, /datasetName: required/);
    assertError(await call(env, 'PATCH', ds(id), { datasetName: 'theirs' }, env.keyB), 404, /dataset .* not found/);
    assertError(await call(env, 'PATCH', ds(randomUUID()), { datasetName: 'x' }), 404);
    const still = await call(env, 'POST', '/v1/experiment/dataset/query', {});
    assert.equal(still.body.data.find((d: { id: string }) => d.id === id).name, 'after');
  });
});

describe('DELETE /v1/experiment/dataset/{datasetId}', () => {
  test('deletes the dataset and its rows, not the requests; a second delete is a 404', async () => {
    const id = await newDataset('few', 3);
    const r = await call(env, 'DELETE', ds(id));
    assertDocumented('DELETE', '/v1/experiment/dataset/{datasetId}', r);
    assert.deepEqual(r.body, { data: null, error: null });
    assertError(await call(env, 'POST', ds(id, '/query'), {}), 404);
    const listed = await call(env, 'POST', '/v1/experiment/dataset/query', {});
    assert.ok(!listed.body.data.some((d: { id: string }) => d.id === id));
    const [{ n }] = await env.db.sql<{ n: number }[]>`select count(*)::int as n from dataset_row where dataset_id = ${id}`;
    assert.equal(n, 0);
    assert.equal((await call(env, 'GET', `/v1/request/${a[4]}`)).status, 200);
    assertError(await call(env, 'DELETE', ds(id)), 404, /dataset .* not found/);
  });

  test("another organization's key gets a 404 and the dataset stays", async () => {
    const id = await newDataset('few', 2);
    assertError(await call(env, 'DELETE', ds(id), undefined, env.keyB), 404, new RegExp(`dataset ${id} not found`));
    assertError(await call(env, 'DELETE', ds(id), undefined, null), 401);
    assertError(await call(env, 'DELETE', ds('nope')), 404);
    assert.deepEqual(await rowsOf(id), [a[4], a[3]]);
  });
});

describe('GET /v1/experiment/dataset/{datasetId}/export', () => {
  /** Fetches the export: status, headers and the body's text. */
  const exportOf = async (id: string, key: string | null = env.keyA) => {
    const res = await fetch(`${env.url}${ds(id, '/export')}`, { headers: key === null ? {} : { authorization: `Bearer ${key}` } });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const lineSchema = { $ref: '#/components/schemas/DatasetExportLine' };

  test('2,500 rows: one JSON object per line, in dataset order, streamed as an attachment', async () => {
    const id = await newDataset('bulk', 10_000, env.keyA, 'bulk: all/“rows”');
    const order = await rowsOf(id);
    assert.equal(order.length, BULK);
    assert.deepEqual(order, [...bulk].reverse());
    await call(env, 'POST', `/v1/request/${order[7]}/score`, { scores: { accuracy: 0.5, ok: true } });
    const r = await exportOf(id);
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assert.match(r.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    assert.match(r.headers.get('content-disposition') ?? '', /^attachment; filename="bulk_ all_.*\.jsonl"; filename\*=UTF-8''/);
    assert.equal(r.headers.get('content-length'), null, 'streamed (chunked), not buffered whole');
    assert.ok(r.text.endsWith('\n'));
    const lines = r.text.slice(0, -1).split('\n');
    assert.equal(lines.length, BULK);
    const parsed = lines.map((l) => JSON.parse(l));
    assert.deepEqual(parsed.map((x) => x.request_id), order);
    parsed.forEach((x, i) => assert.equal(x.position, i));
    for (const x of [parsed[0], parsed[7], parsed[BULK - 1]]) assert.deepEqual(validateSchema(ownDoc, lineSchema, x), []);
    const first = parsed[BULK - 1];
    assert.deepEqual(Object.keys(first).sort(), ['created_at', 'model', 'position', 'prompt_inputs', 'prompt_version_id', 'provider', 'request_body', 'request_id', 'response_body', 'response_model', 'scores', 'status']);
    assert.equal(first.created_at, '2025-08-01T00:01:40.000Z');
    assert.equal(first.model, 'gpt-4o-mini');
    assert.equal(first.provider, 'openai');
    assert.equal(first.status, 200);
    assert.deepEqual(first.request_body, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'row 0\nwith a newline' }] });
    assert.equal(first.response_body.choices[0].message.content, 'Paris.');
    assert.equal(first.prompt_inputs, null);
    assert.deepEqual(first.scores, {});
    assert.deepEqual(parsed[7].scores, { accuracy: 0.5, ok: 1 });
  });

  test('prompt inputs are exported; rows removed or added show as they are now', async () => {
    const id = await newDataset('few', 2);
    await call(env, 'POST', ds(id, '/request'), { requestIds: [a[0]] });
    await call(env, 'DELETE', ds(id, `/request/${a[4]}`));
    const r = await exportOf(id);
    const parsed = r.text.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(parsed.map((x) => [x.request_id, x.position]), [[a[3], 0], [a[0], 1]]);
    assert.deepEqual(parsed[1].prompt_inputs, { city: 'Paris', n: 3 });
    assert.match(parsed[1].prompt_version_id, /^[0-9a-f-]{36}$/);
  });

  test('an empty dataset exports an empty body', async () => {
    const id = await newDataset('nobody', 10);
    const r = await exportOf(id);
    assert.equal(r.status, 200);
    assert.equal(r.text, '');
  });

  test("404 (JSON envelope) for an unknown dataset or another organization's; 401 without a key", async () => {
    const id = await newDataset('few', 1);
    for (const [path, key] of [[randomUUID(), env.keyA], [id, env.keyB], ['nope', env.keyA]] as const) {
      const r = await exportOf(path, key);
      assert.equal(r.status, 404, r.text);
      assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(r.headers.get('content-disposition'), null);
      assert.equal(JSON.parse(r.text).data, null);
      assert.match(JSON.parse(r.text).error, /dataset .* not found/);
    }
    assert.equal((await exportOf(id, null)).status, 401);
  });

  test('a client that stops reading mid-export leaves the server answering', async () => {
    const id = await newDataset('bulk', 10_000);
    const controller = new AbortController();
    const res = await fetch(`${env.url}${ds(id, '/export')}`, { headers: { authorization: `Bearer ${env.keyA}` }, signal: controller.signal });
    const reader = res.body!.getReader();
    const { value } = await reader.read();
    assert.ok(value && value.length > 0);
    controller.abort();
    await reader.cancel().catch(() => {});
    for (let i = 0; i < 3; i++) {
      const again = await exportOf(id);
      assert.equal(again.text.trim().split('\n').length, BULK);
    }
  });
});
