/**
 * End-to-end: the main path. Stub upstream, admin (real PostgreSQL) and proxy run as separate
 * processes; the official `openai` client drives the gateway; records are read back over REST.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { defaultConfig, fetchRecord, readChatStream, startStack, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({
      ...defaultConfig(stubUrl),
      providers: {
        ...(defaultConfig(stubUrl).providers as object),
        mistral: { 'base-url': 'http://127.0.0.1:1/v1' },
      },
      server: { 'upstream-timeout': '1s', 'max-body-size': 1024 * 1024 },
    }),
  });
});
after(async () => {
  await stack?.stop();
});

const client = (baseURL: string, apiKey = stack.apiKey) => new OpenAI({ baseURL, apiKey, maxRetries: 0 });

async function upstreamRequests(): Promise<Array<{ url: string; headers: Record<string, string>; body: any }>> {
  return (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as never;
}

describe('chat completions through /ai', () => {
  test('non-streamed answer, logged with tokens, cost and latency', async () => {
    const { data, response } = await client(`${stack.gatewayUrl}/ai`)
      .chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
    const id = response.headers.get('svc-id')!;
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(response.headers.get('svc-provider'), 'openai');

    const sent = (await upstreamRequests()).at(-1)!;
    assert.equal(sent.url, '/v1/chat/completions');
    assert.equal(sent.body.model, 'gpt-4o-mini', 'the bare model name goes upstream');
    assert.equal(sent.headers.authorization, 'Bearer sk-provider-openai-secret');
    assert.ok(!JSON.stringify(sent.headers).includes(stack.apiKey), 'the caller key never reaches the provider');

    const rec = await fetchRecord(stack, id);
    assert.equal(rec.request_id, id);
    assert.equal(rec.provider, 'OPENAI');
    assert.equal(rec.request_model, 'gpt-4o-mini', 'shown without the provider prefix (the provider is its own field)');
    assert.equal(rec.response_model, 'gpt-4o-2024-08-06');
    assert.equal(rec.response_status, 200);
    assert.equal(rec.prompt_tokens, 24);
    assert.equal(rec.completion_tokens, 8);
    assert.equal(rec.total_tokens, 32);
    assert.ok(typeof rec.cost === 'number' && rec.cost > 0, `cost ${rec.cost}`);
    assert.equal(rec.costUSD, rec.cost);
    assert.ok(rec.delay_ms > 0);
    assert.ok(rec.time_to_first_token > 0 && rec.time_to_first_token <= rec.delay_ms);
    assert.equal(rec.llmSchema.request.model, 'openai/gpt-4o-mini');
    assert.equal(rec.llmSchema.request.messages[0].content, 'What is the capital of France?');
    assert.equal(rec.llmSchema.response.messages[0].content, 'The capital of France is Paris.');
    const stored = JSON.stringify(rec);
    assert.ok(!stored.includes('sk-provider-openai-secret') && !stored.includes(stack.apiKey), 'no key in the record');
  });

  test('streamed answer arrives chunk by chunk and is logged with usage', async () => {
    const { data: stream, response } = await client(`${stack.gatewayUrl}/ai`)
      .chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Capital of the UK?' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    const { text, chunks, usage } = await readChatStream(stream);
    assert.equal(text, 'The capital of the UK is London.');
    assert.ok(chunks >= 10);
    assert.equal(usage?.prompt_tokens, 78);
    const id = response.headers.get('svc-id')!;
    const rec = await fetchRecord(stack, id);
    assert.equal(rec.prompt_tokens, 78);
    assert.equal(rec.completion_tokens, 9);
    assert.ok(rec.time_to_first_token > 0);
    assert.equal(rec.llmSchema.response.messages[0].content, 'The capital of the UK is London.');
    assert.equal(rec.llmSchema.request.stream, true);
  });

  test('a tool call streamed is assembled in the record', async () => {
    const { data: stream, response } = await client(`${stack.gatewayUrl}/ai`)
      .chat.completions.create({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
        stream: true,
      })
      .withResponse();
    let args = '';
    for await (const chunk of stream) args += chunk.choices[0]?.delta?.tool_calls?.[0]?.function?.arguments ?? '';
    assert.equal(args, '{"country":"UK"}');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.llmSchema.response.messages[0]._type, 'functionCall');
    assert.deepEqual(rec.llmSchema.response.messages[0].tool_calls[0].arguments, { country: 'UK' });
  });

  test('the /v1 form of the route works for clients whose base URL ends in /v1', async () => {
    const data = await client(`${stack.gatewayUrl}/v1`).chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(data.object, 'chat.completion');
  });

  test('models list in OpenAI shape', async () => {
    const page = await client(`${stack.gatewayUrl}/ai`).models.list();
    const ids = page.data.map((m) => m.id);
    assert.ok(ids.includes('openai/gpt-4o-mini'));
    assert.ok(ids.includes('anthropic/claude-sonnet-4-5'));
  });
});

describe('authentication', () => {
  test('missing key → 401 invalid_api_key', async () => {
    const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 401);
    const body = (await res.json()) as any;
    assert.equal(body.error.code, 'invalid_api_key');
    assert.equal(typeof body.error.message, 'string');
  });

  test('unknown key → 401 through the openai client', async () => {
    await assert.rejects(
      client(`${stack.gatewayUrl}/ai`, 'sk-svc-not-a-real-key').chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
      (err: any) => err.status === 401 && err.code === 'invalid_api_key',
    );
  });

  test('a key created through REST works on the running gateway', async () => {
    const res = await fetch(`${stack.adminUrl}/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'second' }),
    });
    assert.equal(res.status, 200);
    const { data } = (await res.json()) as { data: { key: string; id: string } };
    assert.match(data.key, /^sk-svc-/);
    let ok = false;
    for (let i = 0; i < 40 && !ok; i++) {
      const r = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${data.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
      });
      ok = r.status === 200;
      await r.arrayBuffer();
      if (!ok) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(ok, 'the new key was accepted within 1 s');
    const del = await fetch(`${stack.adminUrl}/v1/api-keys/${data.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${stack.apiKey}` } });
    assert.equal(del.status, 200);
    let refused = false;
    for (let i = 0; i < 40 && !refused; i++) {
      const r = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${data.key}` }, body: '{}' });
      refused = r.status === 401;
      await r.arrayBuffer();
      if (!refused) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(refused, 'the revoked key was refused within 1 s');
  });
});

describe('routers', () => {
  test('a bare model goes to one of the router providers', async () => {
    const { data, response } = await client(`${stack.gatewayUrl}/router/default`)
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.ok(['openai', 'groq'].includes(response.headers.get('svc-provider')!));
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.request_path, '/router/default/chat/completions');
  });

  test('a provider outside the router → 400; unknown router → 404', async () => {
    await assert.rejects(
      client(`${stack.gatewayUrl}/router/default`).chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'x' }] }),
      (err: any) => err.status === 400 && /not part of router/.test(err.message),
    );
    await assert.rejects(
      client(`${stack.gatewayUrl}/router/nope`).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
      (err: any) => err.status === 404,
    );
  });
});

describe('errors in OpenAI shape', () => {
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers } });

  const cases: Array<[string, string, string, number, string | null]> = [
    ['malformed JSON', '/ai/chat/completions', '{"model":', 400, 'invalid_json'],
    ['missing model', '/ai/chat/completions', '{"messages":[]}', 400, 'missing_model'],
    ['missing messages', '/ai/chat/completions', '{"model":"openai/gpt-4o"}', 400, 'missing_messages'],
    ['no provider prefix', '/ai/chat/completions', '{"model":"gpt-4o","messages":[]}', 400, 'missing_provider'],
    ['unknown provider', '/ai/chat/completions', '{"model":"nope/gpt-4o","messages":[]}', 400, 'unknown_provider'],
    ['unknown path', '/ai/nothing', '{}', 404, 'not_found'],
  ];
  for (const [name, path, body, status, code] of cases) {
    test(`${name} → ${status}`, async () => {
      const res = await post(path, body);
      assert.equal(res.status, status);
      const json = (await res.json()) as any;
      assert.equal(json.error.code, code);
      assert.equal(typeof json.error.message, 'string');
      assert.ok('type' in json.error && 'param' in json.error);
    });
  }

  test('body over the limit → 413', async () => {
    const res = await post('/ai/chat/completions', JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x'.repeat(2 * 1024 * 1024) }] }));
    assert.equal(res.status, 413);
  });

  test('provider error status and body pass through', async () => {
    const res = await post('/ai/chat/completions', JSON.stringify({ model: 'openai/error-429', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(res.status, 429);
    const json = (await res.json()) as any;
    assert.equal(json.error.code, 'rate_limit_exceeded');
    const res500 = await post('/ai/chat/completions', JSON.stringify({ model: 'openai/error-500', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(res500.status, 500);
    const rec = await fetchRecord(stack, res500.headers.get('svc-id')!);
    assert.equal(rec.response_status, 500);
  });

  test('provider unreachable → 502, provider timeout → 504', async () => {
    const res = await post('/ai/chat/completions', JSON.stringify({ model: 'mistral/mistral-large-latest', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as any).error.code, 'upstream_unreachable');
    const slow = await post('/ai/chat/completions', JSON.stringify({ model: 'openai/hang', messages: [{ role: 'user', content: 'x' }] }));
    assert.equal(slow.status, 504);
    assert.equal(((await slow.json()) as any).error.code, 'upstream_timeout');
  });
});

describe('REST reads', () => {
  test('unknown id → 404 envelope, missing key → 401 envelope', async () => {
    const res = await fetch(`${stack.adminUrl}/v1/request/00000000-0000-0000-0000-000000000000`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    assert.equal(res.status, 404);
    const body = (await res.json()) as any;
    assert.equal(body.data, null);
    assert.equal(typeof body.error, 'string');
    const unauth = await fetch(`${stack.adminUrl}/v1/request/00000000-0000-0000-0000-000000000000`);
    assert.equal(unauth.status, 401);
    assert.deepEqual(Object.keys((await unauth.json()) as object).sort(), ['data', 'error']);
  });

  test('another organization cannot read the request', async () => {
    const { response } = await client(`${stack.gatewayUrl}/ai`)
      .chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'private' }] })
      .withResponse();
    const id = response.headers.get('svc-id')!;
    await fetchRecord(stack, id);
    const org = await createOrganization(stack.db.sql, 'Other org');
    const other = await createApiKey(stack.db.sql, org, 'other');
    const res = await fetch(`${stack.adminUrl}/v1/request/${id}`, { headers: { authorization: `Bearer ${other.key}` } });
    assert.equal(res.status, 404);
  });
});
