/**
 * The filter tree's response-cache fields (`request_response_rmt.cache_enabled`, `.cached`,
 * `.cache_reference_id`) and its `feedback` leaf member (admin/filter.ts) on a fresh database:
 * hits and misses told apart, feedback rating true / false / none (a request without feedback
 * matches no boolean condition), feedback id and time, the same filters through every consumer of
 * the filter tree (query, count, dashboard, datasets, sessions), organization scoping, the fields
 * documented in GET /v1/openapi.json, and a 400 naming the field for a bad operator or value.
 * Run: node --import tsx --test test/rest-filter-cache-feedback.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { FEEDBACK_FIELDS, RMT_FIELDS } from '../admin/filter.ts';
import { assertError, call, ingest, logRecord, matchingNames, ownDoc, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
const byId = new Map<string, string>();
const ids: Record<string, string> = {};
const feedbackIds: Record<string, string> = {};
const T0 = Date.parse('2025-04-01T00:00:00Z');

/**
 * Rows of organization A: `plain` (no cache, no feedback), `miss` (asked for the cache, answered by
 * the provider; thumbs up), `hit` (served from `miss`'s answer; thumbs down), `bare` (asked for the
 * cache, missed, no feedback). All in session "s-cache" but `bare`.
 */
before(async () => {
  env = await startRest();
  const at = (minute: number) => ({ createdAt: T0 + minute * 60_000, responseCreatedAt: T0 + minute * 60_000 + 100 });
  const plain = logRecord(env.orgA, { ...at(0), sessionId: 's-cache', userId: 'u-plain' });
  const miss = logRecord(env.orgA, { ...at(1), sessionId: 's-cache', cacheEnabled: true, cacheReferenceId: null, userId: 'u-miss' });
  const hit = logRecord(env.orgA, { ...at(2), sessionId: 's-cache', cacheEnabled: true, cacheReferenceId: miss.requestId, targetUrl: null, attempts: [], userId: 'u-hit' });
  const bare = logRecord(env.orgA, { ...at(3), sessionId: 's-bare', cacheEnabled: true, cacheReferenceId: null, userId: 'u-bare' });
  await ingest(env, env.orgA, [plain, miss, hit, bare]);
  for (const [name, rec] of Object.entries({ plain, miss, hit, bare })) {
    ids[name] = rec.requestId;
    byId.set(rec.requestId, name);
  }
  // Organization B: a thumbs-up cache hit of its own, never seen through A's key.
  const bMiss = logRecord(env.orgB, { ...at(1), cacheEnabled: true, cacheReferenceId: null });
  const bHit = logRecord(env.orgB, { ...at(2), cacheEnabled: true, cacheReferenceId: bMiss.requestId, targetUrl: null, attempts: [] });
  await ingest(env, env.orgB, [bMiss, bHit]);
  byId.set(bMiss.requestId, 'bMiss');
  byId.set(bHit.requestId, 'bHit');

  for (const [name, rating, key] of [['miss', true, env.keyA], ['hit', false, env.keyA], ['bHit', true, env.keyB]] as const) {
    const id = name === 'bHit' ? bHit.requestId : ids[name]!;
    const r = await call(env, 'POST', `/v1/request/${id}/feedback`, { rating }, key);
    assert.equal(r.status, 200, r.text);
  }
  // Known feedback times, so the timestamp operators have a known answer.
  await env.db.sql`update request_feedback set created_at = '2025-05-01T00:00:00Z' where request_id = ${ids.miss!}`;
  await env.db.sql`update request_feedback set created_at = '2025-05-02T00:00:00Z' where request_id = ${ids.hit!}`;
  for (const f of await env.db.sql<{ id: string; request_id: string }[]>`select id, request_id from request_feedback`) {
    feedbackIds[byId.get(f.request_id)!] = f.id;
  }
});
after(async () => {
  await env?.close();
});

/** Names of the rows `filter` matches (organization A's key unless `key`), sorted; the count agrees. */
const names = (filter: unknown, key?: string): Promise<string[]> => matchingNames(env, byId, filter, key);

const rmt = (field: string, op: string, value: unknown) => ({ request_response_rmt: { [field]: { [op]: value } } });
const fb = (field: string, op: string, value: unknown) => ({ feedback: { [field]: { [op]: value } } });

describe('filter: request_response_rmt cache fields', () => {
  test('cached: true selects the hit, false every other request (as isCached)', async () => {
    assert.deepEqual(await names(rmt('cached', 'equals', true)), ['hit']);
    assert.deepEqual(await names(rmt('cached', 'equals', false)), ['bare', 'miss', 'plain']);
    const flag = await call(env, 'POST', '/v1/request/query', { filter: 'all', isCached: true });
    assert.deepEqual(flag.body.data.map((x: { request_id: string }) => byId.get(x.request_id)), ['hit'], 'the isCached flag agrees');
  });

  test('cache_enabled: asked for the cache, hit or miss', async () => {
    assert.deepEqual(await names(rmt('cache_enabled', 'equals', true)), ['bare', 'hit', 'miss']);
    assert.deepEqual(await names(rmt('cache_enabled', 'equals', false)), ['plain']);
    assert.deepEqual(await names({ request_response_rmt: { cache_enabled: { equals: true }, cached: { equals: false } } }), ['bare', 'miss'], 'misses: enabled, not a hit');
  });

  test('cache_reference_id: text operators on the source request id; NULL matches only the negative ones', async () => {
    assert.deepEqual(await names(rmt('cache_reference_id', 'equals', ids.miss!)), ['hit']);
    assert.deepEqual(await names(rmt('cache_reference_id', 'equals', ids.miss!.toUpperCase())), ['hit']);
    assert.deepEqual(await names(rmt('cache_reference_id', 'equals', ids.plain!)), []);
    assert.deepEqual(await names(rmt('cache_reference_id', 'equals', 'not-a-uuid')), []);
    assert.deepEqual(await names(rmt('cache_reference_id', 'not-equals', ids.miss!)), ['bare', 'miss', 'plain']);
    assert.deepEqual(await names(rmt('cache_reference_id', 'like', `${ids.miss!.slice(0, 13)}%`)), ['hit']);
    assert.deepEqual(await names(rmt('cache_reference_id', 'not-contains', ids.miss!.slice(0, 8))), ['bare', 'miss', 'plain']);
  });

  test('organization scoping: B sees only its own hit', async () => {
    assert.deepEqual(await names(rmt('cached', 'equals', true), env.keyB), ['bHit']);
    assert.deepEqual(await names(rmt('cache_reference_id', 'equals', ids.miss!), env.keyB), []);
  });
});

describe('filter: feedback', () => {
  test('rating: true the thumbs up, false the thumbs down; a request without feedback matches neither', async () => {
    assert.deepEqual(await names(fb('rating', 'equals', true)), ['miss']);
    assert.deepEqual(await names(fb('rating', 'equals', false)), ['hit']);
    assert.deepEqual(
      await names({ left: fb('rating', 'equals', true), operator: 'or', right: fb('rating', 'equals', false) }),
      ['hit', 'miss'],
      'plain and bare have no feedback',
    );
    assert.deepEqual(await names({ feedback: {} }), ['bare', 'hit', 'miss', 'plain'], 'an empty member matches all');
  });

  test('id (a UUID, text operators) and created_at (timestamp operators)', async () => {
    assert.deepEqual(await names(fb('id', 'equals', feedbackIds.miss!)), ['miss']);
    assert.deepEqual(await names(fb('id', 'equals', feedbackIds.miss!.toUpperCase())), ['miss']);
    assert.deepEqual(await names(fb('id', 'not-equals', feedbackIds.miss!)), ['bare', 'hit', 'plain'], 'no feedback matches not-equals');
    assert.deepEqual(await names(fb('id', 'like', '%')), ['hit', 'miss'], 'no feedback matches no LIKE');
    assert.deepEqual(await names(fb('id', 'equals', feedbackIds.bHit!)), [], "another organization's feedback");
    assert.deepEqual(await names(fb('created_at', 'gte', '2025-05-02')), ['hit']);
    assert.deepEqual(await names(fb('created_at', 'lt', '2025-05-02T00:00:00Z')), ['miss']);
    assert.deepEqual(await names(fb('created_at', 'equals', '2025-05-01T02:00:00+02:00')), ['miss']);
    assert.deepEqual(await names(fb('created_at', 'gt', '2000-01-01')), ['hit', 'miss'], 'no feedback has no time');
  });

  test('with the cache fields and other members in one leaf and in branches', async () => {
    assert.deepEqual(await names({ request_response_rmt: { cached: { equals: true } }, feedback: { rating: { equals: false } } }), ['hit']);
    assert.deepEqual(await names({ request_response_rmt: { cached: { equals: true } }, feedback: { rating: { equals: true } } }), []);
    assert.deepEqual(await names({ left: rmt('cached', 'equals', false), operator: 'and', right: { request: { user_id: { equals: 'u-miss' } }, feedback: { rating: { equals: true } } } }), ['miss']);
    assert.deepEqual(await names(fb('rating', 'equals', true), env.keyB), ['bHit']);
  });
});

describe('filter: the new fields through every consumer of the filter tree', () => {
  const timeRange = { start: '2025-04-01', end: '2025-04-02' };

  test('dashboard totals count the matching requests', async () => {
    for (const [filter, expected] of [
      [rmt('cached', 'equals', true), 1],
      [rmt('cache_enabled', 'equals', true), 3],
      [fb('rating', 'equals', false), 1],
      [{ left: fb('rating', 'equals', true), operator: 'or', right: rmt('cached', 'equals', true) }, 2],
    ] as const) {
      const r = await call(env, 'POST', '/v1/dashboard/query', { filter, timeRange });
      assert.equal(r.status, 200, r.text.slice(0, 300));
      assert.equal(r.body.data.totals.requests, expected, JSON.stringify(filter));
    }
  });

  test('datasets from a filter (newest and random) hold the matching requests', async () => {
    const newest = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'thumbs up', filter: fb('rating', 'equals', true) });
    assert.equal(newest.status, 200, newest.text);
    assert.equal(newest.body.data.rows, 1);
    const rows = await call(env, 'POST', `/v1/experiment/dataset/${newest.body.data.datasetId}/query`, {});
    assert.deepEqual(rows.body.data.map((x: { request_id: string }) => byId.get(x.request_id)), ['miss']);
    const random = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'misses', filter: { request_response_rmt: { cache_enabled: { equals: true }, cached: { equals: false } } } });
    assert.equal(random.status, 200, random.text);
    const randomRows = await call(env, 'POST', `/v1/experiment/dataset/${random.body.data.datasetId}/query`, {});
    assert.deepEqual(randomRows.body.data.map((x: { request_id: string }) => byId.get(x.request_id)).sort(), ['bare', 'miss']);
  });

  test('session query: a session is listed when one of its requests matches', async () => {
    const sessionsOf = async (filter: unknown) => {
      const r = await call(env, 'POST', '/v1/session/query', { filter });
      assert.equal(r.status, 200, r.text.slice(0, 300));
      return r.body.data.map((s: { session_id: string }) => s.session_id).sort();
    };
    assert.deepEqual(await sessionsOf(rmt('cached', 'equals', true)), ['s-cache']);
    assert.deepEqual(await sessionsOf(rmt('cache_enabled', 'equals', true)), ['s-bare', 's-cache']);
    assert.deepEqual(await sessionsOf(fb('rating', 'equals', false)), ['s-cache']);
    assert.deepEqual(await sessionsOf({ request: { user_id: { equals: 'u-bare' } }, feedback: { rating: { equals: true } } }), []);
  });

  test('replacing a rating changes what the filter matches', async () => {
    assert.equal((await call(env, 'POST', `/v1/request/${ids.miss}/feedback`, { rating: false })).status, 200);
    assert.deepEqual(await names(fb('rating', 'equals', false)), ['hit', 'miss']);
    assert.deepEqual(await names(fb('rating', 'equals', true)), []);
  });
});

describe('filter: the new fields are validated and documented', () => {
  const bad: Array<[unknown, RegExp]> = [
    [rmt('cached', 'not-equals', true), /filter\.request_response_rmt\.cached\.not-equals: unknown boolean operator; expected one of equals/],
    [rmt('cached', 'equals', 'true'), /filter\.request_response_rmt\.cached\.equals: expected a boolean \(true or false\), got a string/],
    [rmt('cache_enabled', 'equals', 1), /filter\.request_response_rmt\.cache_enabled\.equals: expected a boolean/],
    [rmt('cache_enabled', 'equals', null), /filter\.request_response_rmt\.cache_enabled\.equals: expected a boolean \(true or false\), got null/],
    [rmt('cache_enabled', 'contains', 'x'), /filter\.request_response_rmt\.cache_enabled\.contains: unknown boolean operator/],
    [{ request_response_rmt: { cached: true } }, /filter\.request_response_rmt\.cached: expected an object of boolean operators, got a boolean/],
    [rmt('cache_reference_id', 'gt', 'x'), /filter\.request_response_rmt\.cache_reference_id\.gt: unknown text operator/],
    [rmt('cache_reference_id', 'equals', true), /filter\.request_response_rmt\.cache_reference_id\.equals: expected a string/],
    [fb('rating', 'equals', 'yes'), /filter\.feedback\.rating\.equals: expected a boolean/],
    [fb('rating', 'not-equals', false), /filter\.feedback\.rating\.not-equals: unknown boolean operator/],
    [fb('id', 'gte', 1), /filter\.feedback\.id\.gte: unknown text operator/],
    [fb('id', 'equals', 7), /filter\.feedback\.id\.equals: expected a string/],
    [fb('created_at', 'gte', 'yesterday'), /filter\.feedback\.created_at\.gte: expected an ISO-8601/],
    [fb('response_id', 'equals', 'x'), /filter\.feedback\.response_id: unknown field; expected one of id, created_at, rating/],
    [{ feedback: [] }, /filter\.feedback: expected an object of fields/],
    [{ left: 'all', operator: 'or', right: fb('rating', 'equals', 0) }, /filter\.right\.feedback\.rating\.equals: expected a boolean/],
  ];
  for (const [filter, message] of bad) {
    test(`400 for ${JSON.stringify(filter).slice(0, 120)}`, async () => {
      assertError(await call(env, 'POST', '/v1/request/query', { filter }), 400, message);
      assertError(await call(env, 'POST', '/v1/request/count', { filter }), 400, message);
      assertError(await call(env, 'POST', '/v1/dashboard/query', { filter, timeRange: { start: '2025-04-01', end: '2025-04-02' } }), 400, message);
      assertError(await call(env, 'POST', '/v1/session/query', { filter }), 400, message);
      assertError(await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'x', filter }), 400, message);
    });
  }

  test('GET /v1/openapi.json documents exactly the fields the filter accepts', async () => {
    const doc = (await call(env, 'GET', '/v1/openapi.json')).body;
    assert.deepEqual(doc, JSON.parse(JSON.stringify(ownDoc)));
    const schemas = doc.components.schemas;
    assert.deepEqual(Object.keys(schemas.RequestResponseRmtFilter.properties).sort(), Object.keys(RMT_FIELDS).sort());
    assert.deepEqual(Object.keys(schemas.FeedbackFilter.properties).sort(), Object.keys(FEEDBACK_FIELDS).sort());
    assert.deepEqual(schemas.FilterLeaf.properties.feedback, { $ref: '#/components/schemas/FeedbackFilter' });
    for (const field of ['cache_enabled', 'cached']) {
      assert.deepEqual(schemas.RequestResponseRmtFilter.properties[field].allOf, [{ $ref: '#/components/schemas/Partial_BooleanOperators_' }], field);
    }
    assert.deepEqual(schemas.FeedbackFilter.properties.rating, { $ref: '#/components/schemas/Partial_BooleanOperators_' });
    assert.deepEqual(schemas.Partial_BooleanOperators_.properties, { equals: { type: 'boolean' } });
    assert.equal(schemas.Partial_BooleanOperators_.additionalProperties, false);
    assert.match(schemas.FeedbackFilter.description, /response_id is not accepted/);
    assert.match(schemas.FeedbackFilter.description, /UUID/);
  });
});
