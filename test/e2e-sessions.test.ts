/**
 * End-to-end: sessions and feedback through the real processes (stub upstream, admin, proxy):
 * `Svc-Session-Id` / `-Path` / `-Name` on chat completions, Anthropic Messages (/v1/messages) and
 * Responses (/v1/responses) grouping one session; Claude Code's `x-claude-code-session-id` counting
 * as the session when no `Svc-Session-Id` is sent; bad header values answered 400 in the caller's
 * dialect naming the header, before any provider is called; `POST /v1/session/query` paging and time
 * filter; `GET /v1/session/{id}` in time order with paths; and the feedback round trip
 * (`POST /v1/request/{id}/feedback`, shown by `GET /v1/request/{id}`; repeat replaces; 404; 400).
 * Run: node --import tsx --test test/e2e-sessions.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { fetchRecord, startStack, uniq, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.stop();
});

type Dialect = 'chat' | 'messages' | 'responses';

/** One request in `dialect` through the gateway with `headers`; resolves with the response and its body text. */
async function send(dialect: Dialect, headers: Record<string, string> = {}, stream = false): Promise<{ res: Response; text: string }> {
  const auth: Record<string, string> = dialect === 'messages' ? { 'x-api-key': stack.apiKey, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${stack.apiKey}` };
  const { path, body } =
    dialect === 'chat'
      ? { path: '/v1/chat/completions', body: { model: 'openai/gpt-4o-mini', stream, messages: [{ role: 'user', content: 'plan a trip' }] } }
      : dialect === 'messages'
        ? { path: '/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 100, stream, messages: [{ role: 'user', content: 'search flights' }] } }
        : { path: '/v1/responses', body: { model: 'gpt-4o-mini', stream, input: 'write the answer' } };
  const res = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body: JSON.stringify(body) });
  return { res, text: await res.text() };
}

/** Sends a request that must succeed and waits until admin stored it; resolves with its id. */
async function logged(dialect: Dialect, headers: Record<string, string>, stream = false): Promise<string> {
  const { res, text } = await send(dialect, headers, stream);
  assert.equal(res.status, 200, text.slice(0, 300));
  const id = res.headers.get('svc-id')!;
  await fetchRecord(stack, id);
  return id;
}

/** Calls admin's REST API with the stack's key (or `key`). */
async function rest(method: string, path: string, body?: unknown, key = stack.apiKey): Promise<{ status: number; body: any }> {
  const res = await fetch(`${stack.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

const upstreamCount = async (): Promise<number> => ((await (await fetch(`${stack.stubUrl}/__requests`)).json()) as unknown[]).length;

describe('sessions over three dialects', () => {
  test('one Svc-Session-Id over chat, Messages (streamed) and Responses: the session lists them in time order with their paths', async () => {
    const session = `trip-${uniq()}`;
    const h = (path: string) => ({ 'svc-session-id': session, 'svc-session-path': path, 'svc-session-name': 'Trip planner' });
    const chat = await logged('chat', h('/plan'));
    const messages = await logged('messages', h('/plan/search'), true);
    const responses = await logged('responses', h('/plan/search/answer'));

    const detail = await rest('GET', `/v1/session/${encodeURIComponent(session)}`);
    assert.equal(detail.status, 200, JSON.stringify(detail.body));
    const s = detail.body.data;
    assert.equal(s.session_id, session);
    assert.equal(s.session_name, 'Trip planner');
    assert.equal(s.request_count, 3);
    assert.equal(s.errors, 0);
    assert.ok(s.total_tokens > 0 && s.cost > 0, JSON.stringify(s));
    assert.deepEqual(
      s.requests.map((r: any) => [r.request_id, r.request_path, r.session_path, r.provider]),
      [
        [chat, '/v1/chat/completions', '/plan', 'OPENAI'],
        [messages, '/v1/messages', '/plan/search', 'ANTHROPIC'],
        [responses, '/v1/responses', '/plan/search/answer', 'OPENAI'],
      ],
    );
    assert.ok(s.first_request_at <= s.last_request_at);
    assert.equal(s.last_request_at, s.requests[2].request_created_at);

    const rec = await fetchRecord(stack, messages);
    assert.equal(rec.properties['svc-session-id'], session);
    assert.equal(rec.properties['svc-session-path'], '/plan/search');
    assert.equal(rec.properties['svc-session-name'], 'Trip planner');

    const listed = await rest('POST', '/v1/session/query', { filter: { sessions_request_response_rmt: { session_session_id: { equals: session } } } });
    assert.deepEqual(listed.body.data.map((x: any) => [x.session_id, x.request_count]), [[session, 3]]);
    const byRmt = await rest('POST', '/v1/request/query', { filter: { request_response_rmt: { session_id: { equals: session } } } });
    assert.deepEqual(byRmt.body.data.map((x: any) => x.request_id).sort(), [chat, messages, responses].sort());
  });

  test("Claude Code's x-claude-code-session-id is the session when no Svc-Session-Id is sent; Svc-Session-Id wins over it", async () => {
    const cc = randomUUID();
    const first = await logged('messages', { 'x-claude-code-session-id': cc, 'svc-session-path': '/edit' });
    const second = await logged('messages', { 'x-claude-code-session-id': cc });
    const own = `own-${uniq()}`;
    const overridden = await logged('messages', { 'x-claude-code-session-id': cc, 'svc-session-id': own });
    const detail = await rest('GET', `/v1/session/${cc}`);
    assert.equal(detail.status, 200, JSON.stringify(detail.body));
    assert.deepEqual(
      detail.body.data.requests.map((r: any) => [r.request_id, r.session_path]),
      [
        [first, '/edit'],
        [second, null],
      ],
    );
    assert.deepEqual((await rest('GET', `/v1/session/${own}`)).body.data.requests.map((r: any) => r.request_id), [overridden]);
  });

  test('bad values: 400 in the caller\'s dialect naming the header, before any provider is called', async () => {
    const before = await upstreamCount();
    const chat = await send('chat', { 'svc-session-path': 'plan/search' });
    assert.equal(chat.res.status, 400);
    const chatBody = JSON.parse(chat.text);
    assert.match(chatBody.error.message, /Svc-Session-Path must start with "\/"/);
    assert.equal(chatBody.error.param, 'Svc-Session-Path');
    assert.equal(chatBody.error.code, 'invalid_header');

    const messages = await send('messages', { 'svc-session-id': 'x'.repeat(257) });
    assert.equal(messages.res.status, 400);
    const msgBody = JSON.parse(messages.text);
    assert.equal(msgBody.type, 'error', "Anthropic's error shape");
    assert.equal(msgBody.error.type, 'invalid_request_error');
    assert.match(msgBody.error.message, /Svc-Session-Id must be at most 256 characters/);

    const responses = await send('responses', { 'svc-session-name': 'n'.repeat(300) });
    assert.equal(responses.res.status, 400);
    assert.match(JSON.parse(responses.text).error.message, /Svc-Session-Name must be at most 256 characters/);
    const long = await send('responses', { 'svc-session-path': `/${'a'.repeat(1024)}` });
    assert.equal(long.res.status, 400);
    assert.match(JSON.parse(long.text).error.message, /Svc-Session-Path must be at most 1024 characters/);
    assert.equal(await upstreamCount(), before, 'no provider was called');
    // At the limits: accepted.
    await logged('chat', { 'svc-session-id': 'i'.repeat(256), 'svc-session-name': 'n'.repeat(256), 'svc-session-path': `/${'p'.repeat(1023)}` });
  });
});

describe('POST /v1/session/query through the stack', () => {
  test('paging and time filter over the sessions of one run', async () => {
    const run = uniq();
    const ids: string[] = [];
    const times: number[] = [];
    for (let i = 0; i < 4; i++) {
      times.push(Date.now());
      await logged(i % 2 ? 'messages' : 'chat', { 'svc-session-id': `run-${run}-${i}`, 'svc-session-path': '/step', 'svc-property-run': run });
      ids.push(`run-${run}-${i}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const filter = { properties: { run: { equals: run } } };
    const page = async (body: Record<string, unknown>) => ((await rest('POST', '/v1/session/query', { filter, ...body })).body.data as any[]).map((x) => x.session_id);
    assert.deepEqual(await page({}), [...ids].reverse(), 'newest last request first');
    assert.deepEqual(await page({ limit: 2 }), [ids[3], ids[2]]);
    assert.deepEqual(await page({ limit: 2, offset: 2 }), [ids[1], ids[0]]);
    assert.deepEqual(await page({ offset: 4 }), []);
    // From just before the third session's request: the last two.
    const end = Date.now() + 60_000;
    assert.deepEqual(await page({ timeFilter: { startTimeUnixMs: times[2]! - 1, endTimeUnixMs: end } }), [ids[3], ids[2]]);
    assert.deepEqual(await page({ timeFilter: { startTimeUnixMs: times[2]! - 1, endTimeUnixMs: end }, limit: 1, offset: 1 }), [ids[2]]);
    assert.deepEqual(await page({ timeFilter: { startTimeUnixMs: end, endTimeUnixMs: end + 1000 } }), []);
    const bad = await rest('POST', '/v1/session/query', { timeFilter: { startTimeUnixMs: 5, endTimeUnixMs: 1 } });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /timeFilter\.endTimeUnixMs/);
  });
});

describe('feedback through the stack', () => {
  test('POST then GET shows it; repeating replaces; 404 unknown and another organization; 400 naming rating', async () => {
    const id = await logged('chat', {});
    const none = await fetchRecord(stack, id);
    assert.equal(none.feedback_rating, null);
    assert.equal(none.feedback_id, null);

    const up = await rest('POST', `/v1/request/${id}/feedback`, { rating: true });
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.deepEqual(up.body, { data: null, error: null });
    const first = await fetchRecord(stack, id);
    assert.equal(first.feedback_rating, true);
    assert.ok(first.feedback_id && first.feedback_created_at);

    assert.equal((await rest('POST', `/v1/request/${id}/feedback`, { rating: false })).status, 200);
    const second = await fetchRecord(stack, id);
    assert.equal(second.feedback_rating, false, 'the rating is replaced');
    assert.equal(second.feedback_id, first.feedback_id);

    const unknown = await rest('POST', `/v1/request/${randomUUID()}/feedback`, { rating: true });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.data, null);
    assert.match(unknown.body.error, /not found/);

    const other = await createOrganization(stack.db.sql, 'other');
    const otherKey = (await createApiKey(stack.db.sql, other, 'other')).key;
    const foreign = await rest('POST', `/v1/request/${id}/feedback`, { rating: true }, otherKey);
    assert.equal(foreign.status, 404);
    assert.equal((await fetchRecord(stack, id)).feedback_rating, false, "another organization's call changed nothing");

    const bad = await rest('POST', `/v1/request/${id}/feedback`, { rating: 'yes' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data, null);
    assert.match(bad.body.error, /rating/);
  });
});

