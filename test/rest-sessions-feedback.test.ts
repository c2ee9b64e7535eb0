/**
 * REST API: sessions (`POST /v1/session/query`, `GET /v1/session/{sessionId}`), the session filters
 * (`request_response_rmt.session_id`, `sessions_request_response_rmt.session_session_name`) and
 * feedback (`POST /v1/request/{requestId}/feedback`) on a fresh database: shapes against this API's
 * document, paging, the time filter, time order with paths, organization isolation, 400s and 404s.
 * Run: node --import tsx --test test/rest-sessions-feedback.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertDocumented, assertError, assertSchema, call, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
const T0 = Date.parse('2025-06-01T10:00:00Z');
const ids: Record<string, string> = {};

before(async () => {
  env = await startRest();
  const rec = (name: string, session: string | null, minute: number, over: Parameters<typeof logRecord>[1] = {}) => {
    const r = logRecord(env.orgA, { sessionId: session, createdAt: T0 + minute * 60_000, responseCreatedAt: T0 + minute * 60_000 + 100, ...over });
    ids[name] = r.requestId;
    return r;
  };
  await ingest(env, env.orgA, [
    // Session "run-1": three requests, the second answered 500, one without usage.
    rec('a1', 'run-1', 0, { sessionPath: '/plan', sessionName: 'Trip planner' }),
    rec('a2', 'run-1', 2, { sessionPath: '/plan/search', sessionName: 'Trip planner', status: 500 }),
    rec('a3', 'run-1', 1, { sessionPath: '/plan/search/fetch', sessionName: 'Trip planner v2' }),
    // Session "run-2": one request at minute 10.
    rec('b1', 'run-2', 10, { sessionPath: '/', userId: 'zed' }),
    // Session "a/b c": an id that needs percent-encoding, at minute 20.
    rec('c1', 'a/b c', 20, {}),
    // No session.
    rec('n1', null, 5),
    // No session, but a property the client stored under the name a session id is shown by.
    rec('p1', null, 6, { properties: { 'svc-session-id': 'own-property' } }),
  ]);
  await ingest(env, env.orgB, [logRecord(env.orgB, { sessionId: 'run-1', createdAt: T0, sessionPath: '/other' })]);
});
after(async () => {
  await env?.close();
});

const sessions = (body: unknown, key?: string | null) => call(env, 'POST', '/v1/session/query', body, key);
const sessionIds = (r: { body: { data: Array<{ session_id: string }> } }) => r.body.data.map((s) => s.session_id);

describe('POST /v1/session/query', () => {
  test('lists the organization\'s sessions, newest last request first, with their figures', async () => {
    const r = await sessions({});
    assertDocumented('POST', '/v1/session/query', r);
    assert.deepEqual(sessionIds(r), ['a/b c', 'run-2', 'run-1']);
    const run1 = r.body.data[2];
    assert.equal(run1.session_name, 'Trip planner', 'the newest name its requests were sent with (a2, minute 2)');
    assert.equal(run1.first_request_at, new Date(T0).toISOString());
    assert.equal(run1.last_request_at, new Date(T0 + 120_000).toISOString());
    assert.equal(run1.request_count, 3);
    assert.equal(run1.prompt_tokens, 60);
    assert.equal(run1.completion_tokens, 6);
    assert.equal(run1.total_tokens, 66);
    assert.equal(run1.errors, 1);
    assert.ok(run1.cost > 0, `cost ${run1.cost}`);
    assert.equal(r.body.data[1].session_name, null);
    // Organization B sees only its own run-1, of one request.
    const b = await sessions({}, env.keyB);
    assert.deepEqual(sessionIds(b), ['run-1']);
    assert.equal(b.body.data[0].request_count, 1);
  });

  test('paging: offset and limit', async () => {
    assert.deepEqual(sessionIds(await sessions({ limit: 2 })), ['a/b c', 'run-2']);
    assert.deepEqual(sessionIds(await sessions({ limit: 2, offset: 2 })), ['run-1']);
    assert.deepEqual(sessionIds(await sessions({ offset: 3 })), []);
  });

  test('time filter: sessions with a request in [start, end), figures over all their requests', async () => {
    const minute = (m: number) => T0 + m * 60_000;
    const r = await sessions({ timeFilter: { startTimeUnixMs: minute(2), endTimeUnixMs: minute(20) } });
    assert.deepEqual(sessionIds(r), ['run-2', 'run-1'], 'end exclusive: c1 at minute 20 is out');
    assert.equal(r.body.data[1].request_count, 3, 'the whole session, also its requests before the range');
    assert.deepEqual(sessionIds(await sessions({ timeFilter: { startTimeUnixMs: minute(3), endTimeUnixMs: minute(10) } })), []);
    assert.deepEqual(sessionIds(await sessions({ timeFilter: { startTimeUnixMs: minute(10), endTimeUnixMs: minute(30) }, limit: 1, offset: 1 })), ['run-2']);
  });

  test('filter: a session is listed when one of its requests matches', async () => {
    assert.deepEqual(sessionIds(await sessions({ filter: { request: { user_id: { equals: 'zed' } } } })), ['run-2']);
    assert.deepEqual(sessionIds(await sessions({ filter: { response: { status: { equals: 500 } } } })), ['run-1']);
  });

  test('400 naming the member', async () => {
    assertError(await sessions({ timeFilter: { startTimeUnixMs: 10, endTimeUnixMs: 10 } }), 400, /timeFilter\.endTimeUnixMs/);
    assertError(await sessions({ timeFilter: { startTimeUnixMs: 'x', endTimeUnixMs: 10 } }), 400, /timeFilter\.startTimeUnixMs/);
    assertError(await sessions({ limit: 0 }), 400, /limit/);
    assertError(await sessions({ offset: -1 }), 400, /offset/);
    assertError(await sessions({ filter: { nope: {} } }), 400, /filter\.nope/);
    assertError(await sessions({ extra: 1 }), 400, /extra/);
    assertError(await sessions({}, null), 401);
  });
});

describe('GET /v1/session/{sessionId}', () => {
  test("the session's requests in time order with their paths", async () => {
    const r = await call(env, 'GET', '/v1/session/run-1');
    assertDocumented('GET', '/v1/session/{sessionId}', r);
    const s = r.body.data;
    assert.equal(s.session_id, 'run-1');
    assert.equal(s.request_count, 3);
    assert.deepEqual(
      s.requests.map((q: any) => [q.request_id, q.session_path, q.session_name]),
      [
        [ids.a1, '/plan', 'Trip planner'],
        [ids.a3, '/plan/search/fetch', 'Trip planner v2'],
        [ids.a2, '/plan/search', 'Trip planner'],
      ],
    );
    assert.equal(s.requests[0].request_path, '/v1/chat/completions');
    assert.equal(s.requests[0].provider, 'OPENAI');
    assert.equal(s.requests[0].model, 'gpt-4o-mini');
    assert.equal(s.requests[2].status, 500);
    for (const q of s.requests) assertSchema('SessionRequest', q);
  });

  test('paging of the requests; a percent-encoded id; the record shows the session', async () => {
    const page = await call(env, 'GET', '/v1/session/run-1?offset=1&limit=1');
    assert.deepEqual(page.body.data.requests.map((q: any) => q.request_id), [ids.a3]);
    assert.equal(page.body.data.request_count, 3, 'the figures are of the whole session');
    const odd = await call(env, 'GET', `/v1/session/${encodeURIComponent('a/b c')}`);
    assert.equal(odd.status, 200, odd.text);
    assert.deepEqual(odd.body.data.requests.map((q: any) => q.request_id), [ids.c1]);
    const rec = (await call(env, 'GET', `/v1/request/${ids.a3}`)).body.data;
    assert.equal(rec.properties['svc-session-id'], 'run-1');
    assert.equal(rec.properties['svc-session-path'], '/plan/search/fetch');
    assert.equal(rec.properties['svc-session-name'], 'Trip planner v2');
  });

  test('404 for an unknown session and for another organization\'s; 400 for a bad page', async () => {
    assertError(await call(env, 'GET', '/v1/session/nope'), 404, /session "nope" not found/);
    assertError(await call(env, 'GET', '/v1/session/a%2Fb%20c', undefined, env.keyB), 404);
    assertError(await call(env, 'GET', `/v1/session/${'x'.repeat(300)}`), 404);
    assertError(await call(env, 'GET', '/v1/session/run-1?limit=0'), 400, /limit/);
    assertError(await call(env, 'GET', '/v1/session/run-1?offset=x'), 400, /offset/);
    // B's own run-1 holds only B's request.
    const b = await call(env, 'GET', '/v1/session/run-1', undefined, env.keyB);
    assert.equal(b.body.data.request_count, 1);
    assert.equal(b.body.data.requests[0].session_path, '/other');
  });
});

describe('session filters on /v1/request/query', () => {
  const query = (filter: unknown) => call(env, 'POST', '/v1/request/query', { filter, sort: { created_at: 'asc' } });
  test('request_response_rmt.session_id and sessions_request_response_rmt.session_session_id / session_session_name', async () => {
    const rmt = await query({ request_response_rmt: { session_id: { equals: 'run-1' } } });
    assert.deepEqual(rmt.body.data.map((x: any) => x.request_id), [ids.a1, ids.a3, ids.a2]);
    const s = await query({ sessions_request_response_rmt: { session_session_id: { equals: 'run-2' } } });
    assert.deepEqual(s.body.data.map((x: any) => x.request_id), [ids.b1]);
    const named = await query({ sessions_request_response_rmt: { session_session_name: { contains: 'v2' } } });
    assert.deepEqual(named.body.data.map((x: any) => x.request_id), [ids.a3]);
    const none = await query({ request_response_rmt: { session_id: { 'not-equals': 'run-1' } } });
    assert.ok(none.body.data.some((x: any) => x.request_id === ids.n1), 'a request without a session is not-equals');
  });

  test('the svc-session-* properties a record shows are filtered on as shown (they live in the session columns)', async () => {
    const shown = (await call(env, 'GET', `/v1/request/${ids.a2}`)).body.data.properties;
    assert.deepEqual([shown['svc-session-id'], shown['svc-session-path'], shown['svc-session-name']], ['run-1', '/plan/search', 'Trip planner']);
    const byId = await query({ properties: { 'svc-session-id': { equals: 'run-1' } } });
    assert.deepEqual(byId.body.data.map((x: any) => x.request_id), [ids.a1, ids.a3, ids.a2]);
    const byPath = await query({ request_response_rmt: { properties: { 'svc-session-path': { equals: '/plan/search' } } } });
    assert.deepEqual(byPath.body.data.map((x: any) => x.request_id), [ids.a2]);
    const byName = await query({ properties: { 'svc-session-name': { contains: 'v2' } } });
    assert.deepEqual(byName.body.data.map((x: any) => x.request_id), [ids.a3]);
    // Without a session, the record shows the client's own property of that name, and so does the filter.
    assert.equal((await call(env, 'GET', `/v1/request/${ids.p1}`)).body.data.properties['svc-session-id'], 'own-property');
    const own = await query({ properties: { 'svc-session-id': { equals: 'own-property' } } });
    assert.deepEqual(own.body.data.map((x: any) => x.request_id), [ids.p1]);
  });
});

describe('POST /v1/request/{requestId}/feedback', () => {
  const feedback = (id: string, body: unknown, key?: string | null) => call(env, 'POST', `/v1/request/${id}/feedback`, body, key);

  test('a new request has no feedback: nulls', async () => {
    const rec = (await call(env, 'GET', `/v1/request/${ids.b1}`)).body.data;
    assert.equal(rec.feedback_id, null);
    assert.equal(rec.feedback_rating, null);
    assert.equal(rec.feedback_created_at, null);
    assertSchema('SvcRequest', rec);
  });

  test('round trip: the record shows it; repeating replaces the rating (same id, later time)', async () => {
    const before = Date.now();
    const r = await feedback(ids.a1, { rating: true });
    assertDocumented('POST', '/v1/request/{requestId}/feedback', r, 'Result_null.string_');
    assert.deepEqual(r.body, { data: null, error: null });
    const first = (await call(env, 'GET', `/v1/request/${ids.a1}`)).body.data;
    assertSchema('SvcRequest', first);
    assert.equal(first.feedback_rating, true);
    assert.match(first.feedback_id, /^[0-9a-f-]{36}$/);
    assert.ok(Date.parse(first.feedback_created_at) >= before - 5000, first.feedback_created_at);
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal((await feedback(ids.a1, { rating: false })).status, 200);
    const second = (await call(env, 'GET', `/v1/request/${ids.a1}`)).body.data;
    assert.equal(second.feedback_rating, false);
    assert.equal(second.feedback_id, first.feedback_id);
    assert.ok(Date.parse(second.feedback_created_at) > Date.parse(first.feedback_created_at));
    // The query shows it too, and only on that request.
    const rows = (await call(env, 'POST', '/v1/request/query', { filter: { request_response_rmt: { session_id: { equals: 'run-1' } } } })).body.data;
    assert.deepEqual(
      rows.map((x: any) => [x.request_id, x.feedback_rating]).sort(),
      [
        [ids.a1, false],
        [ids.a2, null],
        [ids.a3, null],
      ].sort(),
    );
  });

  test('404 for an unknown request and for another organization\'s; its feedback untouched', async () => {
    assertError(await feedback(randomUUID(), { rating: true }), 404, /not found/);
    assertError(await feedback('not-a-uuid', { rating: true }), 404);
    assertError(await feedback(ids.b1, { rating: true }, env.keyB), 404);
    assert.equal((await call(env, 'GET', `/v1/request/${ids.b1}`)).body.data.feedback_rating, null);
  });

  test('400 naming rating when it is not a boolean', async () => {
    for (const body of [{}, { rating: 'true' }, { rating: 1 }, { rating: null }]) assertError(await feedback(ids.b1, body), 400, /rating/);
    assertError(await feedback(ids.b1, { rating: true, other: 1 }), 400, /other/);
    assertError(await feedback(ids.b1, '{"rating":'), 400);
    assertError(await feedback(ids.b1, { rating: true }, null), 401);
    // superstruct would print an array as its joined elements: "received: " and nothing.
    assertError(await feedback(ids.b1, []), 400, /^invalid body: \(root\): Expected an object, but received an array$/);
    assertError(await feedback(ids.b1, { rating: [] }), 400, /rating: .*, but received an array$/);
  });
});
