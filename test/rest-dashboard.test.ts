/**
 * `POST /v1/dashboard/query` on a fresh database with rows of known values: exact totals, every
 * bucket of the series (empty ones as zeros and null percentiles), the breakdowns by model,
 * provider, API key (labelled with its name) and user, the range's bounds (start inclusive, end
 * exclusive), the filter, the organization's scope, the default bucket, and 400s naming the member.
 * Percentiles are percentile_cont's: p50 of [100, 200, 300, 400, 500] is 300, p95 is 480.
 * Run: node --import tsx --test test/rest-dashboard.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { assertDocumented, assertError, call, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
let k1 = '';
let k2 = '';

interface Row {
  at: string;
  provider: string;
  model: string | null;
  key: string | null;
  user: string | null;
  status: number;
  delay: number | null;
  ttft: number | null;
  pt: number | null;
  ct: number | null;
  cost: number | null;
  org?: string;
}

async function insert(rows: Row[]): Promise<void> {
  for (const r of rows) {
    await env.db.sql`
      insert into request_log (id, organization_id, api_key_id, created_at, path, provider, request_model, user_id, status,
        delay_ms, time_to_first_token, prompt_tokens, completion_tokens, total_tokens, cost_usd)
      values (${randomUUID()}, ${r.org ?? env.orgA}, ${r.key}, ${r.at}::timestamptz, '/v1/chat/completions', ${r.provider}, ${r.model}, ${r.user}, ${r.status},
        ${r.delay}, ${r.ttft}, ${r.pt}, ${r.ct}, ${r.pt === null ? null : r.pt + (r.ct ?? 0)}, ${r.cost})`;
  }
}

before(async () => {
  env = await startRest();
  k1 = (await createApiKey(env.db.sql, env.orgA, 'alpha-key')).id;
  k2 = (await createApiKey(env.db.sql, env.orgA, 'beta-key')).id;
  const base = { provider: 'openai', model: 'gpt-4o-mini', key: k1, user: 'u1', status: 200 };
  await insert([
    { ...base, at: '2025-05-01T00:10:00Z', delay: 100, ttft: 10, pt: 10, ct: 5, cost: 0.25 },
    { ...base, at: '2025-05-01T00:20:00Z', delay: 200, ttft: 20, pt: 20, ct: 10, cost: 0.5 },
    { at: '2025-05-01T00:50:00Z', provider: 'anthropic', model: 'claude-sonnet-4-5', key: k2, user: 'u2', status: 429, delay: 300, ttft: null, pt: 30, ct: 0, cost: null },
    { at: '2025-05-01T02:00:00Z', provider: 'openai', model: 'gpt-4o', key: null, user: null, status: 500, delay: 400, ttft: 40, pt: null, ct: null, cost: 0.125 },
    { ...base, at: '2025-05-01T02:30:00Z', status: 0, delay: 500, ttft: null, pt: null, ct: null, cost: null },
    // Outside the range (end is exclusive, start inclusive) and another organization's: never counted.
    { ...base, at: '2025-05-01T03:00:00Z', delay: 1, ttft: 1, pt: 1000, ct: 1000, cost: 100 },
    { ...base, at: '2025-04-30T23:59:59.999Z', delay: 1, ttft: 1, pt: 1000, ct: 1000, cost: 100 },
    { ...base, at: '2025-05-01T00:30:00Z', key: null, delay: 1, ttft: 1, pt: 1000, ct: 1000, cost: 100, org: env.orgB },
  ]);
});
after(async () => {
  await env?.close();
});

const RANGE = { start: '2025-05-01T00:00:00Z', end: '2025-05-01T03:00:00Z' };
const dash = (body: unknown, key?: string) => call(env, 'POST', '/v1/dashboard/query', body, key);

describe('POST /v1/dashboard/query', () => {
  test('totals: counts, errors (>= 400 or no status), tokens, cost USD, latency and ttft percentiles (ms)', async () => {
    const r = await dash({ filter: 'all', timeRange: RANGE, bucket: 'hour' });
    assertDocumented('POST', '/v1/dashboard/query', r);
    assert.deepEqual(r.body.data.totals, {
      requests: 5,
      errors: 3,
      promptTokens: 60,
      completionTokens: 15,
      costUsd: 0.875,
      latencyP50Ms: 300,
      latencyP95Ms: 480,
      ttftP50Ms: 20,
      ttftP95Ms: 38,
    });
  });

  test('series: every bucket of the range, oldest first, zeros and null percentiles where empty', async () => {
    const r = await dash({ timeRange: RANGE, bucket: 'hour' });
    assert.deepEqual(r.body.data.series, [
      { time: '2025-05-01T00:00:00.000Z', requests: 3, errors: 1, promptTokens: 60, completionTokens: 15, costUsd: 0.75, latencyP50Ms: 200, latencyP95Ms: 290, ttftP50Ms: 15 },
      { time: '2025-05-01T01:00:00.000Z', requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyP50Ms: null, latencyP95Ms: null, ttftP50Ms: null },
      { time: '2025-05-01T02:00:00.000Z', requests: 2, errors: 2, promptTokens: 0, completionTokens: 0, costUsd: 0.125, latencyP50Ms: 450, latencyP95Ms: 495, ttftP50Ms: 40 },
    ]);
  });

  test('breakdowns: by model, provider, API key (its name as label) and user; most requests first, then by key, null last', async () => {
    const r = await dash({ timeRange: RANGE, bucket: 'hour' });
    const { model, provider, apiKey, user } = r.body.data.breakdowns;
    assert.deepEqual(model, [
      { key: 'gpt-4o-mini', requests: 3, errors: 1, promptTokens: 30, completionTokens: 15, costUsd: 0.75, latencyP50Ms: 200 },
      { key: 'claude-sonnet-4-5', requests: 1, errors: 1, promptTokens: 30, completionTokens: 0, costUsd: 0, latencyP50Ms: 300 },
      { key: 'gpt-4o', requests: 1, errors: 1, promptTokens: 0, completionTokens: 0, costUsd: 0.125, latencyP50Ms: 400 },
    ]);
    assert.deepEqual(provider, [
      { key: 'openai', requests: 4, errors: 2, promptTokens: 30, completionTokens: 15, costUsd: 0.875, latencyP50Ms: 300 },
      { key: 'anthropic', requests: 1, errors: 1, promptTokens: 30, completionTokens: 0, costUsd: 0, latencyP50Ms: 300 },
    ]);
    const [first, second] = [k1, k2];
    const keyRows = [
      { key: first, label: 'alpha-key', requests: 3, errors: 1, promptTokens: 30, completionTokens: 15, costUsd: 0.75, latencyP50Ms: 200 },
      { key: second, label: 'beta-key', requests: 1, errors: 1, promptTokens: 30, completionTokens: 0, costUsd: 0, latencyP50Ms: 300 },
    ].sort((a, b) => b.requests - a.requests || a.key.localeCompare(b.key));
    assert.deepEqual(apiKey, [...keyRows, { key: null, label: null, requests: 1, errors: 1, promptTokens: 0, completionTokens: 0, costUsd: 0.125, latencyP50Ms: 400 }]);
    assert.deepEqual(user, [
      { key: 'u1', requests: 3, errors: 1, promptTokens: 30, completionTokens: 15, costUsd: 0.75, latencyP50Ms: 200 },
      { key: 'u2', requests: 1, errors: 1, promptTokens: 30, completionTokens: 0, costUsd: 0, latencyP50Ms: 300 },
      { key: null, requests: 1, errors: 1, promptTokens: 0, completionTokens: 0, costUsd: 0.125, latencyP50Ms: 400 },
    ]);
  });

  test('a breakdown keeps the top 20 groups', async () => {
    const rows: Row[] = [];
    for (let i = 0; i < 25; i++) rows.push({ at: '2025-06-01T00:00:00Z', provider: 'groq', model: `m${String(i).padStart(2, '0')}`, key: null, user: `many-${i}`, status: 200, delay: 1, ttft: 1, pt: 1, ct: 1, cost: 0 });
    rows.push({ ...rows[24]!, user: 'many-24b' });
    await insert(rows);
    const r = await dash({ timeRange: { start: '2025-06-01', end: '2025-06-02' } });
    const models = r.body.data.breakdowns.model.map((x: { key: string }) => x.key);
    assert.equal(models.length, 20);
    assert.deepEqual(models, ['m24', ...Array.from({ length: 19 }, (_, i) => `m${String(i).padStart(2, '0')}`)]);
    assert.equal(r.body.data.breakdowns.user.length, 20);
    assert.equal(r.body.data.totals.requests, 26);
  });

  test('the filter applies to every part; another organization sees only its own rows', async () => {
    const r = await dash({ filter: { request_response_rmt: { provider: { equals: 'anthropic' } } }, timeRange: RANGE, bucket: 'hour' });
    assert.equal(r.body.data.totals.requests, 1);
    assert.deepEqual(r.body.data.series.map((p: { requests: number }) => p.requests), [1, 0, 0]);
    assert.deepEqual(r.body.data.breakdowns.provider.map((p: { key: string }) => p.key), ['anthropic']);
    const b = await dash({ timeRange: RANGE, bucket: 'hour' }, env.keyB);
    assert.equal(b.body.data.totals.requests, 1);
    assert.equal(b.body.data.totals.costUsd, 100);
    assert.deepEqual(b.body.data.breakdowns.apiKey, [{ key: null, label: null, requests: 1, errors: 0, promptTokens: 1000, completionTokens: 1000, costUsd: 100, latencyP50Ms: 1 }]);
  });

  test('no rows: zeros, null percentiles, every bucket, empty breakdowns', async () => {
    const r = await dash({ timeRange: { start: '2024-01-01T00:00:00Z', end: '2024-01-01T00:05:00Z' } });
    assertDocumented('POST', '/v1/dashboard/query', r);
    assert.deepEqual(r.body.data.totals, { requests: 0, errors: 0, promptTokens: 0, completionTokens: 0, costUsd: 0, latencyP50Ms: null, latencyP95Ms: null, ttftP50Ms: null, ttftP95Ms: null });
    assert.equal(r.body.data.series.length, 5, 'minute buckets by default over 5 minutes');
    assert.ok(r.body.data.series.every((p: { requests: number; latencyP50Ms: null }) => p.requests === 0 && p.latencyP50Ms === null));
    assert.deepEqual(r.body.data.breakdowns, { model: [], provider: [], apiKey: [], user: [] });
  });

  test('default bucket: the narrowest of minute, hour, day with at most 200 buckets; buckets are UTC-aligned', async () => {
    const series = async (start: string, end: string, bucket?: string) => (await dash({ timeRange: { start, end }, ...(bucket ? { bucket } : {}) })).body.data.series as Array<{ time: string }>;
    const threeHours = await series('2025-05-01T00:00:00Z', '2025-05-01T03:00:00Z');
    assert.equal(threeHours.length, 180);
    assert.equal(threeHours[1]!.time, '2025-05-01T00:01:00.000Z');
    const twoDays = await series('2025-05-01T00:30:00Z', '2025-05-03T00:30:00Z');
    assert.equal(twoDays.length, 49, 'hours, the first from 00:00');
    assert.equal(twoDays[0]!.time, '2025-05-01T00:00:00.000Z');
    const month = await series('2025-05-01', '2025-05-31');
    assert.equal(month.length, 30);
    assert.equal(month[29]!.time, '2025-05-30T00:00:00.000Z');
    assert.equal((await series('2024-05-01', '2025-05-02')).length, 366);
    assert.equal((await series('2025-05-01T00:00:00+02:00', '2025-05-01T01:00:00+02:00', 'hour'))[0]!.time, '2025-04-30T22:00:00.000Z');
    assert.equal((await series('2025-05-01T00:00:00Z', '2025-05-03T00:00:00Z', 'day')).length, 2);
  });

  test('400s name the member; 401 without a key', async () => {
    assertError(await dash({}), 400, /timeRange: required/);
    assertError(await dash({ timeRange: { start: RANGE.start } }), 400, /timeRange\.end: required/);
    assertError(await dash({ timeRange: { start: 'yesterday', end: RANGE.end } }), 400, /timeRange\.start: expected an ISO-8601/);
    assertError(await dash({ timeRange: { start: RANGE.end, end: RANGE.end } }), 400, /timeRange\.end: must be after timeRange\.start/);
    assertError(await dash({ timeRange: { start: RANGE.end, end: RANGE.start } }), 400, /timeRange\.end: must be after/);
    assertError(await dash({ timeRange: { start: '2024-01-01', end: '2025-01-02' } }), 400, /timeRange: may span at most 366 days/);
    assertError(await dash({ timeRange: RANGE, bucket: 'week' }), 400, /bucket/);
    assertError(await dash({ timeRange: { start: '2025-01-01', end: '2025-01-31' }, bucket: 'minute' }), 400, /bucket: minute gives 43200 buckets/);
    assertError(await dash({ timeRange: RANGE, filter: { response: { status: { like: '5%' } } } }), 400, /filter\.response\.status\.like: unknown number operator/);
    assertError(await dash({ timeRange: RANGE, filter: null }), 400, /filter/);
    assertError(await dash({ timeRange: RANGE, extra: 1 }), 400, /extra: unknown key/);
    assertError(await dash({ timeRange: { ...RANGE, zone: 'UTC' } }), 400, /timeRange\.zone: unknown key/);
    assertError(await dash({ timeRange: RANGE }, null as unknown as string), 401);
    // 366 days exactly is accepted.
    assert.equal((await dash({ timeRange: { start: '2024-01-01', end: '2025-01-01' } })).status, 200);
  });
});
