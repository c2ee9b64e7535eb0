/**
 * End-to-end: a request the gateway refuses because its body could not be parsed or validated (a 400
 * from proxy/stages/validate.ts) answers a `Svc-Id` that can be read back: the request is logged with
 * its status, the gateway's error and the body as received (JSON kept as JSON, anything else as
 * `{raw: text}`, cut at `log-queue.max-body-bytes`). A request without a valid key still answers a
 * `Svc-Id` (the access log's id) but has no organization to be logged in: README says so.
 * Stub upstream, admin (real PostgreSQL) and proxy run as separate processes.
 * Run: node --import tsx --test test/e2e-refused-request-log.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, stubRequests, type Stack } from './support/stack.ts';

/** The log's body cap in this stack (bytes): small, so a refused body can be sent past it. */
const LOG_BODY_CAP = 4096;

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({ ...defaultConfig(stubUrl), 'log-queue': { 'flush-interval': '20ms', 'max-body-bytes': LOG_BODY_CAP } }),
  });
});
after(async () => {
  await stack?.stop();
});

function post(path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body,
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
  });
}

/** The stored row of a logged request (what GET /v1/request/{id} does not show as such). */
async function row(id: string): Promise<{ status: number; error: unknown; extra: { bodyTruncated: boolean; endpoint: string }; provider: string }> {
  const [r] = await stack.db.sql<any[]>`select status, error, extra, provider from request_log where id = ${id}`;
  return r;
}

describe('a request refused for its body is logged under its Svc-Id', () => {
  const CHAT = '/ai/chat/completions';
  const cases: Array<{ name: string; body: unknown; error: RegExp; member?: string }> = [
    { name: 'temperature: "hot"', body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], temperature: 'hot' }, error: /temperature/ },
    { name: 'messages: "nope"', body: { model: 'openai/gpt-4o-mini', messages: 'nope' }, error: /messages/ },
  ];
  for (const c of cases) {
    test(`chat, ${c.name}: 400 whose Svc-Id reads back the status, the error and the body as sent`, async () => {
      const before = (await stubRequests(stack.stubUrl)).length;
      const res = await post(CHAT, JSON.stringify(c.body), { 'svc-property-run': 'refused-1', 'svc-user-id': 'alice' });
      const answer = (await res.json()) as { error: { message: string } };
      assert.equal(res.status, 400);
      assert.match(answer.error.message, c.error);
      const id = res.headers.get('svc-id');
      assert.match(id ?? '', /^[0-9a-f-]{36}$/);
      const rec = await fetchRecord(stack, id!);
      assert.equal(rec.response_status, 400);
      assert.deepEqual(rec.request_body, c.body);
      assert.equal(rec.request_path, CHAT, 'the path the client called');
      assert.equal(rec.request_properties.run, 'refused-1');
      assert.equal(rec.request_user_id, 'alice');
      assert.equal(rec.provider, 'SVC', 'no provider was chosen: the gateway answered');
      const stored = await row(id!);
      assert.equal(stored.status, 400);
      assert.match(JSON.stringify(stored.error), /temperature|messages/);
      assert.equal(stored.extra.bodyTruncated, false);
      assert.equal((await stubRequests(stack.stubUrl)).length, before, 'nothing went to a provider');
    });
  }

  test('malformed JSON: the body is kept as the text received ({raw: text})', async () => {
    const text = '{"model": "openai/gpt-4o-mini", "messages": [';
    const res = await post(CHAT, text);
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: { message: string } }).error.message, /malformed JSON/);
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.response_status, 400);
    assert.deepEqual(rec.request_body, { raw: text });
    assert.match(JSON.stringify((await row(rec.request_id)).error), /malformed JSON/);
  });

  test('a refused body past log-queue.max-body-bytes is cut there and marked truncated', async () => {
    const text = `{"model": "openai/gpt-4o-mini", "messages": "${'x'.repeat(3 * LOG_BODY_CAP)}"`;
    const res = await post(CHAT, text);
    assert.equal(res.status, 400);
    await res.arrayBuffer();
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.deepEqual(rec.request_body, { raw: text.slice(0, LOG_BODY_CAP) });
    assert.equal((await row(rec.request_id)).extra.bodyTruncated, true);
  });

  test('Messages: a refused body is logged as a messages request', async () => {
    const body = { model: 'anthropic/claude-sonnet-4-5', max_tokens: 'many', messages: [{ role: 'user', content: 'hi' }] };
    const res = await post('/ai/v1/messages', JSON.stringify(body));
    const answer = (await res.json()) as { type: string; error: { type: string } };
    assert.equal(res.status, 400);
    assert.equal(answer.type, 'error', "Anthropic's error shape");
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.response_status, 400);
    assert.deepEqual(rec.request_body, body);
    assert.equal((await row(rec.request_id)).extra.endpoint, 'messages');
  });

  test('the filter finds refused requests by status (what a platform team debugging a client asks for)', async () => {
    const res = await post(CHAT, '{"model": "openai/gpt-4o-mini", "messages": 7, "user": "refused-filter"}', { 'svc-property-Probe': 'p1' });
    assert.equal(res.status, 400);
    await res.arrayBuffer();
    const id = res.headers.get('svc-id')!;
    await fetchRecord(stack, id);
    const q = await fetch(`${stack.adminUrl}/v1/request/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: { left: { response: { status: { equals: 400 } } }, operator: 'and', right: { properties: { Probe: { equals: 'p1' } } } } }),
    });
    assert.equal(q.status, 200);
    const found = ((await q.json()) as { data: Array<{ request_id: string }> }).data.map((r) => r.request_id);
    assert.deepEqual(found, [id]);
  });
});

describe('a request without a valid key', () => {
  test('answers a Svc-Id (the access log id) and is not logged; README says which answers cannot be read back', async () => {
    const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: 'nope' }),
      headers: { authorization: 'Bearer sk-svc-not-a-key', 'content-type': 'application/json' },
    });
    assert.equal(res.status, 401);
    await res.arrayBuffer();
    assert.match(res.headers.get('svc-id') ?? '', /^[0-9a-f-]{36}$/);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const at = readme.indexOf('Every response carries `Svc-Id`');
    assert.ok(at >= 0);
    const paragraph = readme.slice(at, readme.indexOf('\n\n', at));
    assert.match(paragraph, /refused .*body|body .*refused|could not be parsed/i, 'README says refused bodies are logged');
    assert.match(paragraph, /401|without a valid key|not authenticated/i, 'README names the answers that are not logged');
  });
});
