/**
 * REST API and ingestion of response-cache records (issue 18) on a fresh database: a hit's row has
 * `cache_enabled`, `cache_reference_id`, `cost` 0 and `svc-cache-cost-saved`; `isCached` on
 * `POST /v1/request/query` and `/count` selects hits (true) or every other row (false); records of
 * older proxies (no cache members) read as not cached.
 * Run: node --import tsx --test test/rest-cache.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { assertSchema, call, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
let plain = '';
let miss = '';
let hit = '';

before(async () => {
  env = await startRest();
  const old = logRecord(env.orgA);
  const original = logRecord(env.orgA, { cacheEnabled: true, cacheReferenceId: null });
  const served = logRecord(env.orgA, { cacheEnabled: true, cacheReferenceId: original.requestId, targetUrl: null, attempts: [] });
  [plain, miss, hit] = await ingest(env, env.orgA, [old, original, served]);
});
after(async () => {
  await env?.close();
});

const query = (body: unknown) => call(env, 'POST', '/v1/request/query', body);
const ids = (r: { body: { data: Array<{ request_id: string }> } }) => r.body.data.map((x) => x.request_id).sort();

test('a hit costs 0, names the request it was served from and the cost it saved', async () => {
  const rows = (await query({ filter: 'all' })).body.data as Array<Record<string, any>>;
  const byId = new Map(rows.map((r) => [r.request_id, r]));
  const h = byId.get(hit)!;
  const m = byId.get(miss)!;
  const p = byId.get(plain)!;
  for (const r of [h, m, p]) assertSchema('SvcRequest', r);
  assert.equal(h.cache_enabled, true);
  assert.equal(h.cache_reference_id, miss);
  assert.equal(h.cost, 0);
  assert.equal(h.costUSD, 0);
  assert.equal(h.prompt_tokens, 20, "the served answer's tokens");
  assert.ok(m.cost > 0);
  assert.equal(Number(h.properties['svc-cache-cost-saved']), m.cost);
  assert.equal(m.cache_enabled, true);
  assert.equal(m.cache_reference_id, null);
  assert.equal(m.properties['svc-cache-cost-saved'], undefined);
  assert.equal(p.cache_enabled, false, "an older proxy's record");
  assert.equal(p.cache_reference_id, null);
});

test('isCached: true selects the hits, false every other row; /count agrees', async () => {
  assert.deepEqual(ids(await query({ filter: 'all', isCached: true })), [hit]);
  assert.deepEqual(ids(await query({ filter: 'all', isCached: false })), [miss, plain].sort());
  assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all', isCached: true })).body.data, 1);
  assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all', isCached: false })).body.data, 2);
  assert.deepEqual((await call(env, 'POST', '/v1/request/query', { filter: 'all', isCached: true }, env.keyB)).body.data, [], 'scoped to the organization');
});
