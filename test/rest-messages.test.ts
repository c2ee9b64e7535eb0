/**
 * Anthropic Messages records through ingestion and the REST API, on a real database: JSON and
 * streamed responses from the recorded fixtures (usage with cache reads and writes, cost with
 * Anthropic's cache prices), `llmSchema` mapped from Messages content (system, text, image,
 * tool_use, tool_result, thinking, tools; Claude Code's captured request), the no-price note, the
 * removed members of a translated request, one coding session found through the REST filter (query
 * and datasets), and records of the previous proxy version (no session, no removed members) still
 * accepted. Every SvcRequest is checked against the reference schema.
 * Run: node --import tsx --test test/rest-messages.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ingestRecords } from '../admin/ingest.ts';
import type { LogRecord } from '../shared/record.ts';
import { anthropicFixture, readMessagesStream } from './support/messages-stream.ts';
import { assertDocumented, assertError, assertSchema, call, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

const SESSION = 'b87e806d-ecc0-4050-b5b6-49f2537a3d15';
const OTHER_SESSION = 'a0000000-0000-4000-8000-000000000002';

const claudeCodeText = readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request.json', import.meta.url), 'utf8');
const claudeCodeRequest = JSON.parse(claudeCodeText);
const claudeCodeHeaders = JSON.parse(readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request-headers.json', import.meta.url), 'utf8'));
const toolUseRequest = JSON.parse(anthropicFixture('claude-code-request.json'));
const message = JSON.parse(anthropicFixture('message.json'));
const toolUseMessage = JSON.parse(anthropicFixture('message-tool-use.json'));

/** A Messages record, as the proxy sends it for `POST /v1/messages`, with `over` applied. */
function messagesRecord(organizationId: string, over: Partial<LogRecord>): LogRecord {
  return logRecord(organizationId, {
    path: '/v1/messages',
    targetUrl: 'https://api.anthropic.com/v1/messages',
    provider: 'anthropic',
    requestModel: 'claude-sonnet-4-5-20250929',
    modelSent: 'claude-sonnet-4-5-20250929',
    requestBody: {
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'Answer in one sentence.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'text', text: 'What is Python?' },
          ],
        },
      ],
    },
    responseBody: message,
    usage: message.usage,
    attempts: [{ provider: 'anthropic', status: 200, latencyMs: 400 }],
    endpoint: 'messages',
    sessionId: SESSION,
    wireFormat: 'anthropic-messages',
    ...over,
  });
}

let env: RestEnv;
const ids: Record<string, string> = {};

before(async () => {
  env = await startRest();
  const thinking = readMessagesStream(anthropicFixture('message-stream-thinking-tool-use.sse'));
  const hello = readMessagesStream(anthropicFixture('message-stream.sse'));
  const records: Record<string, LogRecord> = {
    json: messagesRecord(env.orgA, {}),
    toolUse: messagesRecord(env.orgA, {
      requestModel: toolUseRequest.model,
      modelSent: 'claude-haiku-4-5-20251001',
      requestBody: toolUseRequest,
      responseBody: toolUseMessage,
      usage: toolUseMessage.usage,
    }),
    // The recorder hands the folded message (usage as message_start sent it) and the last usage.
    thinkingStream: messagesRecord(env.orgA, {
      streamed: true,
      modelSent: 'claude-haiku-4-5-20251001',
      requestBody: JSON.parse(anthropicFixture('message-stream-thinking-tool-use.request.json')),
      responseBody: thinking.message,
      usage: thinking.usages.at(-1),
    }),
    // Claude Code's captured request, answered with the stream its capture was answered with.
    claudeCode: messagesRecord(env.orgA, {
      path: '/v1/messages?beta=true',
      streamed: true,
      requestModel: 'claude-opus-5-5',
      modelSent: 'claude-opus-5-5',
      requestBody: claudeCodeRequest,
      responseBody: hello.message,
      usage: hello.usages.at(-1),
      sessionId: claudeCodeHeaders.headers['x-claude-code-session-id'],
    }),
    // The same request translated to an OpenAI model the table has no price for.
    translated: messagesRecord(env.orgA, {
      provider: 'openai',
      targetUrl: 'https://api.openai.com/v1/chat/completions',
      requestModel: 'openai/gpt-6.2-astra',
      modelSent: 'gpt-6.2-astra',
      streamed: true,
      requestBody: claudeCodeRequest,
      responseBody: hello.message,
      usage: hello.usages.at(-1),
      wireFormat: 'openai-chat',
      removedMembers: ['context_management', 'system[1].cache_control'],
      attempts: [{ provider: 'openai', status: 200, latencyMs: 300 }],
    }),
    unknownModel: messagesRecord(env.orgA, { modelSent: 'claude-nonexistent-9', requestModel: 'claude-nonexistent-9', sessionId: OTHER_SESSION }),
  };
  for (const [name, rec] of Object.entries(records)) ids[name] = rec.requestId;
  await ingest(env, env.orgA, Object.values(records));
  // Another organization's request in the same session id: never mixed in.
  await ingest(env, env.orgB, [messagesRecord(env.orgB, { sessionId: SESSION })]);
});
after(async () => {
  await env?.close();
});

const get = async (name: string) => {
  const r = await call(env, 'GET', `/v1/request/${ids[name]}`);
  assertDocumented('GET', '/v1/request/{requestId}', r, 'ResultSuccess_SvcRequest_');
  assertSchema('SvcRequest', r.body.data);
  return r.body.data;
};

describe('ingestion and cost of Messages records', () => {
  test('a JSON message: Anthropic usage, cache reads and writes, cost with the cache prices', async () => {
    const r = await get('json');
    assert.deepEqual(
      [r.prompt_tokens, r.completion_tokens, r.total_tokens, r.prompt_cache_read_tokens, r.prompt_cache_write_tokens],
      [3 + 1111 + 418, 33, 1565, 1111, 418],
    );
    // $3 input, $0.30 reads, $3.75 5-minute writes, $15 output: 9 + 333.3 + 1567.5 + 495 = 2404.8 → $0.0024048
    assert.equal(r.cost, 0.0024048);
    assert.equal(r.costUSD, 0.0024048);
    assert.equal(r.properties['svc-endpoint'], 'messages');
    assert.equal(r.properties['svc-tokens-source'], 'provider');
    assert.equal(r.properties['svc-cost-note'], undefined);
    assert.equal(r.ai_gateway_body_mapping, null, 'passthrough: no body mapping');
    assert.equal(r.response_id, message.id);
    assert.deepEqual(r.response_body, message, 'the body as received');
  });

  test('a streamed message: message_start and message_delta usage, thinking as reasoning tokens', async () => {
    const r = await get('thinkingStream');
    assert.deepEqual([r.prompt_tokens, r.completion_tokens, r.reasoning_tokens], [598, 92, 53]);
    // Haiku 4.5, $1 in, $5 out: 598 + 460 = 1058 → $0.001058
    assert.equal(r.cost, 0.001058);
  });

  test("Claude Code's request on claude-opus-5-5, its input from message_start (delta: output only)", async () => {
    const r = await get('claudeCode');
    assert.deepEqual([r.prompt_tokens, r.completion_tokens, r.total_tokens], [11, 6, 17]);
    // $4 in, $20 out: 44 + 120 = 164 → $0.000164
    assert.equal(r.cost, 0.000164);
    assert.equal(r.request_path, '/v1/messages?beta=true');
    assert.equal(r.properties['svc-session-id'], SESSION);
  });

  test('a model without a price says so: cost null and svc-cost-note', async () => {
    const r = await get('translated');
    assert.equal(r.prompt_tokens, 11);
    assert.equal(r.cost, null);
    assert.equal(r.properties['svc-cost-note'], 'unknown model price: the model table has no price for this model');
    assert.equal((await get('unknownModel')).properties['svc-cost-note'], 'unknown model: not in the model table, so no price');
  });

  test('a translated request shows its removed members, wire format and body mapping', async () => {
    const r = await get('translated');
    assert.deepEqual(JSON.parse(r.properties['svc-removed-members']), ['context_management', 'system[1].cache_control']);
    assert.equal(r.properties['svc-wire-format'], 'openai-chat');
    assert.equal(r.ai_gateway_body_mapping, 'ANTHROPIC');
    assert.equal(r.provider, 'OPENAI');
  });

  test('1-hour cache writes are priced apart and shown', async () => {
    const usage = {
      input_tokens: 10,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 3000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
      output_tokens: 500,
    };
    const rec = messagesRecord(env.orgA, { modelSent: 'claude-opus-5-5', usage, responseBody: { ...message, model: 'claude-opus-5-5', usage } });
    await ingest(env, env.orgA, [rec]);
    const r = (await call(env, 'GET', `/v1/request/${rec.requestId}`)).body.data;
    // 10·4 + 1000·0.2 + 1000·5 + 2000·8 + 500·20 = 31240 → $0.03124
    assert.equal(r.cost, 0.03124);
    assert.equal(r.prompt_cache_write_tokens, 3000);
    assert.equal(r.properties['svc-cache-write-1h-tokens'], '2000');
  });

  test('records of the previous proxy version (no sessionId, removedMembers, wireFormat) are still accepted', async () => {
    const old = logRecord(env.orgA) as Record<string, unknown>;
    for (const k of ['sessionId', 'removedMembers', 'wireFormat']) assert.ok(!(k in old));
    const result = await ingestRecords(env.db.sql, env.orgA, [old]);
    assert.deepEqual([result.stored, result.rejected], [1, 0]);
    const r = (await call(env, 'GET', `/v1/request/${old.requestId}`)).body.data;
    assert.equal(r.properties['svc-session-id'], undefined);
    assert.equal(r.cost, 0.0000042, 'gpt-4o-mini: 20·0.15 + 2·0.6 = 4.2 millionths');
  });

  test('a record with an unknown endpoint kind or a non-string session is rejected, naming the member', async () => {
    const bad = await ingestRecords(env.db.sql, env.orgA, [
      { ...messagesRecord(env.orgA, {}), endpoint: 'completions' },
      { ...messagesRecord(env.orgA, {}), sessionId: 42 },
    ]);
    assert.equal(bad.rejected, 2);
    assert.match(bad.errors[0]!, /^endpoint:/);
    assert.match(bad.errors[1]!, /^sessionId:/);
  });
});

describe('llmSchema of Messages', () => {
  test('system blocks, an image and text; the response text', async () => {
    const { request, response } = (await get('json')).llmSchema;
    assert.equal(request.llm_type, 'chat');
    assert.equal(request.provider, 'ANTHROPIC');
    assert.equal(request.max_tokens, 1024);
    assert.deepEqual(request.messages[0], {
      _type: 'contentArray',
      role: 'system',
      contentArray: [{ _type: 'message', role: 'system', content: 'Answer in one sentence.' }],
      content: 'Answer in one sentence.',
    });
    assert.deepEqual(request.messages[1].contentArray, [
      { _type: 'image', role: 'user', image_url: 'data:image/png;base64,iVBORw0KGgo=', mime_type: 'image/png' },
      { _type: 'message', role: 'user', content: 'What is Python?' },
    ]);
    assert.equal(response.model, 'claude-sonnet-4-5-20250929');
    assert.equal(response.messages[0].role, 'assistant');
    assert.equal(response.messages[0].content, message.content[0].text);
  });

  test('tool_use and tool_result blocks, tools with their input_schema (claude-code-request.json, message-tool-use.json)', async () => {
    const { request, response } = (await get('toolUse')).llmSchema;
    assert.equal(request.messages[0].role, 'system');
    assert.equal(request.tools.length, toolUseRequest.tools.length);
    assert.deepEqual(request.tools[0], { name: toolUseRequest.tools[0].name, description: toolUseRequest.tools[0].description, parameters: toolUseRequest.tools[0].input_schema });
    const assistant = request.messages.find((m: { _type: string }) => m._type === 'functionCall');
    const firstUse = toolUseRequest.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : [])).find((b: { type: string }) => b.type === 'tool_use');
    assert.deepEqual(assistant.tool_calls[0], { id: firstUse.id, name: firstUse.name, arguments: firstUse.input });
    const results = request.messages.flatMap((m: { contentArray?: Array<{ _type: string }> }) => m.contentArray ?? []).filter((p: { _type: string }) => p._type === 'function');
    assert.equal(results.length, 2);
    assert.equal(results[0].tool_call_id, firstUse.id);
    assert.equal(response.messages[0]._type, 'functionCall');
    assert.deepEqual(
      response.messages[0].tool_calls.map((c: { name: string; arguments: unknown }) => [c.name, c.arguments]),
      toolUseMessage.content.filter((b: { type: string }) => b.type === 'tool_use').map((b: { name: string; input: unknown }) => [b.name, b.input]),
    );
  });

  test('a streamed response: thinking as reasoning, the tool call with its parsed input', async () => {
    const { response } = (await get('thinkingStream')).llmSchema;
    const m = response.messages[0];
    assert.match(m.reasoning, /^The user wants me to:/);
    assert.equal(m.tool_calls[0].name, 'fixed_version');
  });

  test("Claude Code's request: system in blocks, a role system message, 12 tools, effort, max_tokens", async () => {
    const { request } = (await get('claudeCode')).llmSchema;
    assert.equal(request.model, 'claude-opus-5-5');
    assert.equal(request.max_tokens, 128000);
    assert.equal(request.stream, true);
    assert.equal(request.reasoning_effort, 'medium');
    assert.equal(request.tools.length, 12);
    assert.deepEqual(
      request.messages.map((m: { role: string }) => m.role),
      ['system', ...claudeCodeRequest.messages.map((m: { role: string }) => m.role)],
    );
    assert.equal(request.messages[0].content, claudeCodeRequest.system.map((b: { text: string }) => b.text).join(''));
    assert.ok(request.messages.some((m: { role: string; content?: string }, i: number) => i > 0 && m.role === 'system' && m.content?.includes('# Environment')));
  });
});

describe('one coding session through the REST filter', () => {
  const bySession = (id: string, key?: string) =>
    call(env, 'POST', '/v1/request/query', { filter: { sessions_request_response_rmt: { session_session_id: { equals: id } } }, sort: { created_at: 'asc' } }, key);

  test('finds all requests of one session, in order, and only of the caller', async () => {
    const r = await bySession(SESSION);
    assertDocumented('POST', '/v1/request/query', r, 'ResultSuccess_SvcRequest-Array_');
    const found = r.body.data.map((x: { request_id: string }) => x.request_id);
    assert.deepEqual(found.slice(0, 5), [ids.json, ids.toolUse, ids.thinkingStream, ids.claudeCode, ids.translated]);
    assert.ok(!found.includes(ids.unknownModel));
    for (const x of r.body.data) assert.equal(x.properties['svc-session-id'], SESSION);
    assert.equal((await bySession(SESSION, env.keyB)).body.data.length, 1, "org B's own request only");
    assert.deepEqual((await bySession(OTHER_SESSION)).body.data.map((x: { request_id: string }) => x.request_id), [ids.unknownModel]);
    assert.deepEqual((await bySession('no-such-session')).body.data, []);
  });

  test('combines with other conditions, and feeds datasets and scores', async () => {
    const r = await call(env, 'POST', '/v1/request/query', {
      filter: { sessions_request_response_rmt: { session_session_id: { equals: SESSION } }, request: { model: { equals: 'claude-opus-5-5' } } },
    });
    assert.deepEqual(r.body.data.map((x: { request_id: string }) => x.request_id), [ids.claudeCode]);
    const ds = await call(env, 'POST', '/v1/experiment/dataset/random', { datasetName: 'session', filter: { sessions_request_response_rmt: { session_session_id: { equals: OTHER_SESSION } } } });
    assert.equal(ds.status, 200, ds.text);
    const rows = await call(env, 'POST', `/v1/experiment/dataset/${ds.body.data.datasetId}/query`, {});
    assert.deepEqual(rows.body.data.map((x: { request_id: string }) => x.request_id), [ids.unknownModel]);
    assert.equal((await call(env, 'POST', `/v1/evals/${ids.claudeCode}`, { name: 'helpful', score: 1 })).status, 200);
    assert.deepEqual((await get('claudeCode')).scores, { helpful: 1 });
  });

  test('an unknown session field or operator is a 400 naming its path', async () => {
    assertError(
      await call(env, 'POST', '/v1/request/query', { filter: { sessions_request_response_rmt: { session_name: { equals: 'x' } } } }),
      400,
      /filter\.sessions_request_response_rmt\.session_name: unknown field; expected one of session_session_id/,
    );
    assertError(
      await call(env, 'POST', '/v1/request/query', { filter: { sessions_request_response_rmt: { session_session_id: { gte: 'x' } } } }),
      400,
      /filter\.sessions_request_response_rmt\.session_session_id\.gte: unknown text operator/,
    );
  });

  test('a session id is stored trimmed and cut at 256 characters; an empty one is none', async () => {
    const long = 's'.repeat(300);
    const recs = [messagesRecord(env.orgA, { sessionId: `  ${long}  ` }), messagesRecord(env.orgA, { sessionId: '   ' })];
    await ingest(env, env.orgA, recs);
    assert.equal((await call(env, 'GET', `/v1/request/${recs[0]!.requestId}`)).body.data.properties['svc-session-id'], 's'.repeat(256));
    assert.equal((await call(env, 'GET', `/v1/request/${recs[1]!.requestId}`)).body.data.properties['svc-session-id'], undefined);
  });
});
