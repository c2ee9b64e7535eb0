/**
 * The filter tree's `request_response_rmt`, `response` and `properties` leaf members (admin/filter.ts)
 * through `POST /v1/request/query` and `POST /v1/request/count` on a fresh database: every field
 * against rows whose columns are set to known values, NULL semantics, property names as bind
 * parameters, branches mixing the members, a 400 naming the exact path for each kind of mistake, and
 * a fast-check run: no filter over these members, however malformed, is a 500 on the query, the
 * count or the dashboard, and all three agree on whether it is valid.
 * Run: node --import tsx --test test/rest-filter-rmt.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { RMT_FIELDS } from '../admin/filter.ts';
import { assertError, call, ingest, logRecord, matchingNames, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
const byId = new Map<string, string>();
const ids: Record<string, string> = {};

/** The known column values of each row (set after ingestion, so each filter's answer is known). */
const ROWS = {
  f1: { provider: 'openai', model: 'openai/gpt-4o-mini', user: 'alice', status: 200, delay: 100, ttft: 10, prompt: 10, completion: 5, total: 15, cacheRead: 4, cost: 0.5, created: '2025-03-01T00:00:00Z', properties: { env: 'prod', team: 'Alpha' }, responseModel: 'gpt-4o-mini-2024-07-18', target: 'https://api.openai.com/v1/chat/completions' },
  f2: { provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5', user: 'bob', status: 429, delay: 300, ttft: null, prompt: 20, completion: 0, total: 20, cacheRead: null, cost: null, created: '2025-03-02T00:00:00Z', properties: { env: 'dev' }, responseModel: 'claude-sonnet-4-5-20250929', target: 'https://api.anthropic.com/v1/messages' },
  f3: { provider: 'groq', model: 'groq/llama-3.1-8b-instant', user: null, status: 500, delay: 200, ttft: 30, prompt: null, completion: null, total: null, cacheRead: null, cost: 0.25, created: '2025-03-03T00:00:00Z', properties: {}, responseModel: null, target: 'https://api.groq.com/openai/v1/chat/completions' },
} as const;

before(async () => {
  env = await startRest();
  for (const [name, r] of Object.entries(ROWS)) {
    const rec = logRecord(env.orgA, {
      provider: r.provider,
      requestModel: r.model,
      modelSent: r.responseModel,
      userId: r.user,
      status: r.status,
      createdAt: Date.parse(r.created),
      responseCreatedAt: Date.parse(r.created) + r.delay,
      properties: { ...r.properties },
      targetUrl: r.target,
      responseBody: r.responseModel ? { id: 'x', object: 'chat.completion', model: r.responseModel, choices: [] } : null,
    });
    await ingest(env, env.orgA, [rec]);
    await env.db.sql`
      update request_log set status = ${r.status}, delay_ms = ${r.delay}, time_to_first_token = ${r.ttft}, prompt_tokens = ${r.prompt},
        completion_tokens = ${r.completion}, total_tokens = ${r.total}, prompt_cache_read_tokens = ${r.cacheRead}, cost_usd = ${r.cost}
      where id = ${rec.requestId}`;
    ids[name] = rec.requestId;
    byId.set(rec.requestId, name);
  }
  // Organization B's twin of f1: never seen through A's key.
  const twin = logRecord(env.orgB, { provider: 'openai', userId: 'alice', properties: { env: 'prod', team: 'Alpha' }, createdAt: Date.parse(ROWS.f1.created) });
  await ingest(env, env.orgB, [twin]);
  byId.set(twin.requestId, 'fB');
  // Organization B's xai request: the record shows its provider as `X`, not its config name.
  const xai = logRecord(env.orgB, { provider: 'xai', requestModel: 'xai/grok-4', attempts: [], createdAt: Date.parse(ROWS.f1.created) });
  await ingest(env, env.orgB, [xai]);
  byId.set(xai.requestId, 'fX');
  ids.fX = xai.requestId;
});
after(async () => {
  await env?.close();
});

/** Names of the rows `filter` matches (organization A's key unless `key`), sorted; the count agrees. */
const names = (filter: unknown, key?: string): Promise<string[]> => matchingNames(env, byId, filter, key);

const rmt = (field: string, op: string, value: unknown) => ({ request_response_rmt: { [field]: { [op]: value } } });

describe('filter: request_response_rmt', () => {
  test('provider, model (without the provider prefix), user_id (NULL matches only the negative operators)', async () => {
    assert.deepEqual(await names(rmt('provider', 'equals', 'anthropic')), ['f2']);
    assert.deepEqual(await names(rmt('provider', 'not-equals', 'anthropic')), ['f1', 'f3']);
    assert.deepEqual(await names(rmt('provider', 'contains', 'AI')), ['f1']);
    assert.deepEqual(await names(rmt('model', 'equals', 'gpt-4o-mini')), ['f1']);
    assert.deepEqual(await names(rmt('model', 'equals', 'openai/gpt-4o-mini')), []);
    assert.deepEqual(await names(rmt('model', 'like', 'claude%')), ['f2']);
    assert.deepEqual(await names(rmt('model', 'ilike', 'LLAMA%')), ['f3']);
    assert.deepEqual(await names(rmt('user_id', 'equals', 'alice')), ['f1']);
    assert.deepEqual(await names(rmt('user_id', 'not-equals', 'alice')), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('user_id', 'not-contains', 'b')), ['f1', 'f3']);
    assert.deepEqual(await names(rmt('user_id', 'like', '%')), ['f1', 'f2']);
  });

  test('provider: the name the record shows (OPENAI, X) is found, as is the config name, in any case', async () => {
    // What GET /v1/request/{id} shows (the reference's upper-case ProviderName) must be a value the filter finds.
    const shown = (await call(env, 'GET', `/v1/request/${ids.f1!}`)).body.data.provider as string;
    assert.equal(shown, 'OPENAI');
    assert.deepEqual(await names(rmt('provider', 'equals', shown)), ['f1']);
    assert.deepEqual(await names(rmt('provider', 'equals', 'Anthropic')), ['f2']);
    assert.deepEqual(await names(rmt('provider', 'not-equals', 'OPENAI')), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('provider', 'like', 'OPEN%')), ['f1']);
    assert.deepEqual(await names(rmt('provider', 'like', 'open%')), ['f1'], 'the config name still matches');
    assert.deepEqual(await names(rmt('provider', 'ilike', 'gr%')), ['f3']);
    assert.deepEqual(await names(rmt('provider', 'not-contains', 'ANTHROP')), ['f1', 'f3']);
    assert.deepEqual(await names({ left: rmt('provider', 'equals', 'GROQ'), operator: 'or', right: rmt('provider', 'equals', 'openai') }), ['f1', 'f3']);
    // xai is shown as X (shared/providers.ts logName): both names find it, neither finds the others.
    const shownX = (await call(env, 'GET', `/v1/request/${ids.fX!}`, undefined, env.keyB)).body.data.provider as string;
    assert.equal(shownX, 'X');
    assert.deepEqual(await names(rmt('provider', 'equals', shownX), env.keyB), ['fX']);
    assert.deepEqual(await names(rmt('provider', 'equals', 'x'), env.keyB), ['fX']);
    assert.deepEqual(await names(rmt('provider', 'equals', 'xai'), env.keyB), ['fX']);
    assert.deepEqual(await names(rmt('provider', 'not-equals', 'X'), env.keyB), ['fB']);
    assert.deepEqual(await names(rmt('provider', 'equals', 'OPENAI'), env.keyB), ['fB']);
  });

  test('status (HTTP status): every number operator', async () => {
    assert.deepEqual(await names(rmt('status', 'equals', 429)), ['f2']);
    assert.deepEqual(await names(rmt('status', 'not-equals', 200)), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('status', 'gte', 400)), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('status', 'gt', 429)), ['f3']);
    assert.deepEqual(await names(rmt('status', 'lt', 300)), ['f1']);
    assert.deepEqual(await names(rmt('status', 'lte', 429)), ['f1', 'f2']);
  });

  test('latency and time_to_first_token (ms); a NULL time matches only not-equals', async () => {
    assert.deepEqual(await names(rmt('latency', 'gt', 150)), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('latency', 'lte', 100)), ['f1']);
    assert.deepEqual(await names(rmt('latency', 'equals', 200)), ['f3']);
    assert.deepEqual(await names({ request_response_rmt: { latency: { gte: 100, lt: 300 } } }), ['f1', 'f3'], 'two operators AND together');
    assert.deepEqual(await names(rmt('time_to_first_token', 'gte', 10)), ['f1', 'f3']);
    assert.deepEqual(await names(rmt('time_to_first_token', 'lt', 20)), ['f1']);
    assert.deepEqual(await names(rmt('time_to_first_token', 'not-equals', 10)), ['f2', 'f3']);
  });

  test('cost (USD) and token counts', async () => {
    assert.deepEqual(await names(rmt('cost', 'gt', 0.3)), ['f1']);
    assert.deepEqual(await names(rmt('cost', 'lt', 1)), ['f1', 'f3']);
    assert.deepEqual(await names(rmt('cost', 'equals', 0.25)), ['f3']);
    assert.deepEqual(await names(rmt('cost', 'not-equals', 0.5)), ['f2', 'f3'], 'an unknown cost is not 0.5');
    assert.deepEqual(await names(rmt('prompt_tokens', 'equals', 20)), ['f2']);
    assert.deepEqual(await names(rmt('prompt_tokens', 'gte', 10)), ['f1', 'f2']);
    assert.deepEqual(await names(rmt('completion_tokens', 'equals', 0)), ['f2']);
    assert.deepEqual(await names(rmt('completion_tokens', 'gt', 0)), ['f1']);
    assert.deepEqual(await names(rmt('total_tokens', 'lte', 15)), ['f1']);
    assert.deepEqual(await names(rmt('total_tokens', 'not-equals', 15)), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('prompt_cache_read_tokens', 'equals', 4)), ['f1']);
    assert.deepEqual(await names(rmt('prompt_cache_write_tokens', 'gt', 0)), []);
  });

  test('request_created_at and response_created_at: timestamp operators', async () => {
    assert.deepEqual(await names(rmt('request_created_at', 'gte', '2025-03-02')), ['f2', 'f3']);
    assert.deepEqual(await names(rmt('request_created_at', 'lt', '2025-03-02T00:00:00Z')), ['f1']);
    assert.deepEqual(await names(rmt('request_created_at', 'equals', '2025-03-03T01:00:00+01:00')), ['f3']);
    assert.deepEqual(await names(rmt('response_created_at', 'equals', '2025-03-02T00:00:00.300Z')), ['f2']);
    assert.deepEqual(await names(rmt('response_created_at', 'gt', '2025-03-01T00:00:00.100Z')), ['f2', 'f3']);
  });

  test('request_id (a UUID), target_url, prompt_id, prompt_version', async () => {
    assert.deepEqual(await names(rmt('request_id', 'equals', ids.f2!)), ['f2']);
    assert.deepEqual(await names(rmt('request_id', 'equals', ids.f2!.toUpperCase())), ['f2']);
    assert.deepEqual(await names(rmt('request_id', 'not-equals', ids.f2!)), ['f1', 'f3']);
    assert.deepEqual(await names(rmt('request_id', 'equals', 'not-a-uuid')), []);
    assert.deepEqual(await names(rmt('request_id', 'like', `${ids.f1!.slice(0, 18)}%`)), ['f1']);
    assert.deepEqual(await names(rmt('target_url', 'contains', 'anthropic.com')), ['f2']);
    assert.deepEqual(await names(rmt('prompt_id', 'equals', ids.f1!)), []);
    assert.deepEqual(await names(rmt('prompt_version', 'not-equals', '1.0')), ['f1', 'f2', 'f3']);
  });

  test('request_response_rmt.properties: text operators on each property; an absent one is NULL', async () => {
    const prop = (name: string, op: string, value: string) => ({ request_response_rmt: { properties: { [name]: { [op]: value } } } });
    assert.deepEqual(await names(prop('env', 'equals', 'prod')), ['f1']);
    assert.deepEqual(await names(prop('env', 'not-equals', 'prod')), ['f2', 'f3']);
    assert.deepEqual(await names(prop('env', 'like', '%')), ['f1', 'f2']);
    assert.deepEqual(await names(prop('team', 'contains', 'ALPH')), ['f1']);
    assert.deepEqual(await names(prop('team', 'not-contains', 'alph')), ['f2', 'f3']);
    assert.deepEqual(await names(prop('missing', 'equals', 'x')), []);
    assert.deepEqual(await names({ request_response_rmt: { properties: { env: { equals: 'prod' }, team: { equals: 'Alpha' } }, status: { equals: 200 } } }), ['f1']);
  });

  test('property names have no case (Svc-Property-<Name> headers are stored lower-cased): Env finds env', async () => {
    const prop = (name: string, op: string, value: string) => ({ request_response_rmt: { properties: { [name]: { [op]: value } } } });
    assert.deepEqual(await names(prop('Env', 'equals', 'prod')), ['f1']);
    assert.deepEqual(await names(prop('TEAM', 'contains', 'alph')), ['f1']);
    assert.deepEqual(await names(prop('Env', 'not-equals', 'prod')), ['f2', 'f3']);
    assert.deepEqual(await names({ properties: { ENV: { equals: 'dev' } } }), ['f2']);
    assert.deepEqual(await names({ properties: { Env: { like: '%' } } }), ['f1', 'f2']);
    assert.deepEqual(await names({ properties: { Env: { equals: 'prod' }, env: { equals: 'prod' } } }), ['f1'], 'both spellings name one property');
    assert.deepEqual(await names({ properties: { ENV: { equals: 'prod' } } }, env.keyB), ['fB']);
  });
});

describe('filter: properties and response', () => {
  test('properties: the same, as a top-level leaf member; names travel as parameters', async () => {
    assert.deepEqual(await names({ properties: { env: { equals: 'dev' } } }), ['f2']);
    assert.deepEqual(await names({ properties: { env: { ilike: 'P%' } } }), ['f1']);
    assert.deepEqual(await names({ properties: { env: { 'not-equals': 'dev' } } }), ['f1', 'f3']);
    assert.deepEqual(await names({ properties: {} }), ['f1', 'f2', 'f3']);
    assert.deepEqual(await names({ properties: { "env' or '1'='1": { equals: 'prod' } } }), []);
    assert.deepEqual(await names({ properties: { "x') or true --": { 'not-equals': 'y' } } }), ['f1', 'f2', 'f3']);
    const [{ count }] = await env.db.sql<{ count: number }[]>`select count(*)::int as count from request_log`;
    assert.equal(count, 5, 'the table is intact');
  });

  test('response.status (number) and response.model (the model the provider answered with)', async () => {
    assert.deepEqual(await names({ response: { status: { equals: 500 } } }), ['f3']);
    assert.deepEqual(await names({ response: { status: { gte: 400 } } }), ['f2', 'f3']);
    assert.deepEqual(await names({ response: { status: { 'not-equals': 429 } } }), ['f1', 'f3']);
    assert.deepEqual(await names({ response: { model: { equals: 'claude-sonnet-4-5-20250929' } } }), ['f2']);
    assert.deepEqual(await names({ response: { model: { contains: '2024' } } }), ['f1']);
  });

  test('branches mixing the members; organization scoping holds', async () => {
    assert.deepEqual(
      await names({ left: rmt('provider', 'equals', 'openai'), operator: 'or', right: { response: { status: { equals: 500 } } } }),
      ['f1', 'f3'],
    );
    assert.deepEqual(
      await names({ left: { properties: { env: { like: '%' } } }, operator: 'and', right: { request: { user_id: { equals: 'bob' } }, request_response_rmt: { latency: { gte: 300 } } } }),
      ['f2'],
    );
    assert.deepEqual(await names({ properties: { env: { equals: 'prod' } } }, env.keyB), ['fB']);
    assert.deepEqual(await names(rmt('request_id', 'equals', ids.f1!), env.keyB), []);
  });
});

describe('filter: validation of the new members names the exact path', () => {
  const bad: Array<[unknown, RegExp]> = [
    [rmt('status', 'contains', '4'), /filter\.request_response_rmt\.status\.contains: unknown number operator/],
    [rmt('latency', 'like', '1%'), /filter\.request_response_rmt\.latency\.like: unknown number operator/],
    [rmt('cost', 'equals', 'free'), /filter\.request_response_rmt\.cost\.equals: expected a number/],
    [rmt('prompt_tokens', 'gt', null), /filter\.request_response_rmt\.prompt_tokens\.gt: expected a number/],
    [rmt('provider', 'gt', 'a'), /filter\.request_response_rmt\.provider\.gt: unknown text operator/],
    [rmt('model', 'equals', 4), /filter\.request_response_rmt\.model\.equals: expected a string/],
    [rmt('user_id', 'like', 'a\\'), /filter\.request_response_rmt\.user_id\.like: a LIKE pattern must not end/],
    [rmt('request_created_at', 'gte', 'yesterday'), /filter\.request_response_rmt\.request_created_at\.gte: expected an ISO-8601/],
    [rmt('request_created_at', 'contains', '2025'), /filter\.request_response_rmt\.request_created_at\.contains: unknown timestamp operator/],
    [rmt('request_id', 'gte', 'x'), /filter\.request_response_rmt\.request_id\.gte: unknown text operator/],
    [rmt('country', 'equals', 'x'), /filter\.request_response_rmt\.country: unknown field/],
    [{ request_response_rmt: [] }, /filter\.request_response_rmt: expected an object of fields/],
    [{ request_response_rmt: { status: 200 } }, /filter\.request_response_rmt\.status: expected an object of number operators/],
    [{ request_response_rmt: { properties: { env: { startsWith: 'p' } } } }, /filter\.request_response_rmt\.properties\.env\.startsWith: unknown text operator/],
    [{ request_response_rmt: { properties: 'env' } }, /filter\.request_response_rmt\.properties: expected an object of property names/],
    [{ properties: { env: { equals: 1 } } }, /filter\.properties\.env\.equals: expected a string/],
    [{ properties: { env: 'prod' } }, /filter\.properties\.env: expected an object of text operators/],
    [{ properties: { '': { equals: 'x' } } }, /filter\.properties\.: a property name must not be empty/],
    [{ properties: { ['n'.repeat(1001)]: { equals: 'x' } } }, /a property name may be at most 1000 characters/],
    [{ properties: [] }, /filter\.properties: expected an object of property names/],
    [{ response: { status: { like: '5%' } } }, /filter\.response\.status\.like: unknown number operator/],
    [{ response: { status: { equals: '500' } } }, /filter\.response\.status\.equals: expected a number/],
    [{ response: { body_model: { equals: 'x' } } }, /filter\.response\.body_model: unknown field; expected one of status, model/],
    [{ left: 'all', operator: 'and', right: { left: rmt('status', 'gte', 400), operator: 'or', right: rmt('cost', 'gt', 'x') } }, /filter\.right\.right\.request_response_rmt\.cost\.gt: expected a number/],
  ];
  for (const [filter, message] of bad) {
    test(`400 for ${JSON.stringify(filter).slice(0, 120)}`, async () => {
      assertError(await call(env, 'POST', '/v1/request/query', { filter }), 400, message);
      assertError(await call(env, 'POST', '/v1/request/count', { filter }), 400, message);
    });
  }

  test('a property name holding U+0000 is a 400, never a 500', async () => {
    const r = await call(env, 'POST', '/v1/request/query', { filter: { properties: { 'a\u0000b': { equals: 'x' } } } });
    assertError(r, 400, /filter\.properties\.a\u0000b: must not contain the character U\+0000|U\+0000/);
  });
});

describe('filter: property-based, the new members', () => {
  test('no filter, however malformed, yields a 500; query, count and dashboard agree on validity and count', async () => {
    const value = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 12 }),
      fc.double(),
      fc.integer(),
      fc.jsonValue({ maxDepth: 1 }),
      fc.constantFrom('2025-03-01', '2025-03-02T00:00:00Z', "' or 1=1 --", '%', '\\', 'prod', 'openai', 200, 0.25, 300),
    );
    const ops = fc.dictionary(fc.constantFrom('equals', 'not-equals', 'like', 'ilike', 'contains', 'not-contains', 'gte', 'lte', 'lt', 'gt', 'bogus'), value, { maxKeys: 3 });
    const properties = fc.oneof(fc.dictionary(fc.oneof(fc.constantFrom('env', 'team', ''), fc.string({ unit: 'binary', maxLength: 6 })), fc.oneof(ops, value), { maxKeys: 2 }), value);
    const rmtMember = fc.dictionary(fc.constantFrom(...Object.keys(RMT_FIELDS), 'x'), fc.oneof(ops, properties, value), { maxKeys: 3 });
    const leaf = fc.record(
      { request_response_rmt: rmtMember, response: fc.dictionary(fc.constantFrom('status', 'model', 'x'), fc.oneof(ops, value), { maxKeys: 2 }), properties },
      { requiredKeys: [] },
    );
    const tree = fc.letrec<{ node: unknown }>((tie) => ({
      node: fc.oneof({ maxDepth: 4 }, fc.constant('all'), leaf, fc.record({ left: tie('node'), operator: fc.constantFrom('and', 'or'), right: tie('node') })),
    })).node;
    let valid = 0;
    await fc.assert(
      fc.asyncProperty(tree, async (filter) => {
        const what = JSON.stringify(filter).slice(0, 400);
        const q = await call(env, 'POST', '/v1/request/query', { filter });
        assert.ok(q.status === 200 || q.status === 400, `${q.status} ${q.text.slice(0, 200)} for ${what}`);
        const c = await call(env, 'POST', '/v1/request/count', { filter });
        assert.equal(c.status, q.status, `count: ${c.text.slice(0, 200)} for ${what}`);
        const d = await call(env, 'POST', '/v1/dashboard/query', { filter, timeRange: { start: '2025-03-01', end: '2025-03-04' } });
        assert.equal(d.status, q.status, `dashboard: ${d.text.slice(0, 200)} for ${what}`);
        if (q.status === 200) {
          valid++;
          assert.equal(c.body.data, q.body.data.length, what);
          assert.equal(d.body.data.totals.requests, q.body.data.length, what);
        }
      }),
      { numRuns: 200 },
    );
    assert.ok(valid >= 10, `${valid} valid filters among the runs`);
  });
});
