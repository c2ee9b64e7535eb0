/**
 * End-to-end: native providers (Anthropic, Bedrock) and embeddings through the gateway with the
 * official `openai` client, and routers that survive failing providers (retries, failover, health,
 * streams never retried once started). The stub upstream plays each provider from recorded fixtures;
 * a `/mode/<behaviour>/` base URL makes a provider fail in a chosen way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { AWS_TEST_ENV, fetchRecord, startStack, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stub) => ({
      svc: { features: 'observability' },
      server: { 'upstream-timeout': '500ms' },
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        anthropic: { 'base-url': `${stub}/v1` },
        bedrock: { 'base-url': stub, region: 'us-east-1' },
        groq: { 'base-url': `${stub}/mode/error-500/v1` },
        mistral: { 'base-url': `${stub}/mode/error-429/v1` },
        together: { 'base-url': 'http://127.0.0.1:1/v1' },
        fireworks: { 'base-url': `${stub}/mode/hang/v1` },
        xai: { 'base-url': `${stub}/mode/reset-mid-stream/v1` },
        deepseek: { 'base-url': `${stub}/v1` },
        azure: { 'base-url': stub, deployments: { 'gpt-4o-mini': 'prod-mini' }, 'api-version': '2024-10-21' },
      },
      routers: {
        failover: {
          'load-balance': { chat: { strategy: 'latency', providers: ['groq', 'mistral', 'together', 'fireworks', 'openai'] } },
          retries: { 'max-retries': 4, 'min-delay': '5ms', 'max-delay': '20ms' },
          health: { 'min-requests': 2, 'error-threshold': 0.5, 'cool-down': '1m', window: '1m' },
        },
        'all-bad': {
          'load-balance': { chat: { strategy: 'latency', providers: ['groq'] } },
          retries: { strategy: 'constant', 'max-retries': 2, 'min-delay': '5ms' },
        },
        streams: {
          'load-balance': { chat: { strategy: 'latency', providers: ['xai', 'openai'] } },
          retries: { 'max-retries': 3, 'min-delay': '5ms', 'max-delay': '10ms' },
        },
        weighted: {
          'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'openai', weight: 1 }, { provider: 'deepseek', weight: 1 }] } },
        },
        mapped: {
          'load-balance': {
            chat: { strategy: 'model-mappings', providers: ['anthropic'], 'model-mappings': { 'gpt-4o': ['anthropic/claude-sonnet-4-5'] } },
          },
        },
      },
    }),
    proxyEnv: { AZURE_OPENAI_API_KEY: 'azure-provider-secret', ...AWS_TEST_ENV },
  });
});
after(async () => {
  await stack?.stop();
});

const client = (path: string) => new OpenAI({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: stack.apiKey, maxRetries: 0 });
const lastUpstream = async () => ((await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[]).at(-1);

describe('Anthropic through the OpenAI format', () => {
  test('non-streamed: mapped request and response, cache tokens logged', async () => {
    const { data, response } = await client('/ai')
      .chat.completions.create({
        model: 'anthropic/claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What is Python?' },
        ],
        stop: ['END'],
      })
      .withResponse();
    assert.match(data.choices[0]!.message.content!, /^Python is a beginner-friendly/);
    assert.equal(data.object, 'chat.completion');
    const sent = await lastUpstream();
    assert.equal(sent.url, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], 'sk-ant-provider-secret');
    assert.ok(sent.headers['anthropic-version']);
    assert.equal(sent.headers.authorization, undefined, 'no Bearer header goes to Anthropic');
    assert.equal(sent.body.system, 'Be brief.');
    assert.deepEqual(sent.body.stop_sequences, ['END']);
    assert.ok(sent.body.max_tokens > 0);
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.equal(rec.provider, 'ANTHROPIC');
    assert.equal(rec.prompt_cache_read_tokens, 1111);
    assert.equal(rec.prompt_cache_write_tokens, 418);
    assert.equal(rec.completion_tokens, 33);
    assert.ok(rec.cost > 0);
  });

  test('tools: four parallel tool calls come back as tool_calls', async () => {
    const data = await client('/ai').chat.completions.create({
      model: 'anthropic/claude-haiku-4-5',
      messages: [{ role: 'user', content: 'look up' }],
      tools: [{ type: 'function', function: { name: 'retrieve_entity_info', parameters: { type: 'object', properties: {} } } }],
    });
    assert.equal(data.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(data.choices[0]!.message.tool_calls!.length, 4);
  });

  test('streamed: chat.completion.chunk events ending in [DONE], usage logged', async () => {
    const { data: stream, response } = await client('/ai')
      .chat.completions.create({ model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: '1+1?' }], stream: true })
      .withResponse();
    let text = '';
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, '2');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.ok(rec.prompt_tokens > 0);
    assert.equal(rec.llmSchema.response.messages[0].content, '2');
  });

  test('a model-mappings router sends the mapped model to a provider lacking the requested one', async () => {
    await client('/router/mapped').chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] });
    assert.equal((await lastUpstream()).body.model, 'claude-sonnet-4-5');
  });
});

describe('Bedrock Converse through the OpenAI format', () => {
  test('non-streamed, SigV4-signed', async () => {
    const data = await client('/ai').chat.completions.create({ model: 'bedrock/us.amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'hi' }] });
    assert.match(data.choices[0]!.message.content!, /^Hello! How can I assist you today\?/);
    assert.equal(data.usage?.total_tokens, 37);
    const sent = await lastUpstream();
    assert.match(sent.url, /^\/model\/us\.amazon\.nova-micro-v1(%3A|:)0\/converse$/);
    assert.match(sent.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
  });

  test('streamed: the binary event stream becomes chat chunks', async () => {
    const stream = await client('/ai').chat.completions.create({ model: 'bedrock/us.amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'capital?' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.match(text, /^The capital of France is Paris\. Paris is not only/);
  });
});

describe('embeddings', () => {
  test('/ai/embeddings with usage logged', async () => {
    const { data, response } = await client('/ai').embeddings.create({ model: 'openai/text-embedding-3-small', input: 'hello', dimensions: 128 }).withResponse();
    assert.equal(data.object, 'list');
    assert.ok(data.data[0]!.embedding.length === 128);
    assert.equal((await lastUpstream()).url, '/v1/embeddings');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.ok(rec.prompt_tokens > 0);
    assert.equal(rec.request_path, '/ai/embeddings');
  });
});

describe('routers that survive failing providers', () => {
  test('every request is answered by a healthy provider; failing ones leave the pool', async () => {
    const ids: string[] = [];
    // The balancer picks at random and, once two candidates remain, always the faster one: a failing
    // provider may never be tried. What must hold is that every answer comes from the healthy
    // provider and that each provider that failed often enough (min-requests 2, all errors) is out.
    for (let i = 0; i < 24; i++) {
      const { data, response } = await client('/router/failover')
        .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `q${i}` }] })
        .withResponse();
      assert.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
      assert.equal(response.headers.get('svc-provider'), 'openai');
      ids.push(response.headers.get('svc-id')!);
    }
    const records = await Promise.all(ids.map((id) => fetchRecord(stack, id)));
    assert.ok(records.every((r) => r.response_status === 200 && r.provider === 'OPENAI'));
    const rows = await stack.db.sql<{ extra: any }[]>`select extra from request_log where path = '/router/failover/chat/completions'`;
    const failures = new Map<string, number>();
    for (const r of rows) {
      for (const a of r.extra.attempts as Array<{ provider: string; status: number }>) {
        if (a.status === 0 || a.status >= 500) failures.set(a.provider, (failures.get(a.provider) ?? 0) + 1);
      }
    }
    const ejectable = [...failures].filter(([, n]) => n >= 2).map(([p]) => p);
    assert.ok(ejectable.length > 0, `some provider failed twice: ${JSON.stringify([...failures])}`);
    const health = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as any;
    const failover = health.routers.failover as Array<{ provider: string; healthy: boolean }>;
    assert.equal(failover.find((p) => p.provider === 'openai')!.healthy, true);
    for (const provider of ejectable) {
      assert.equal(failover.find((p) => p.provider === provider)!.healthy, false, `${provider} failed twice and left the pool`);
    }
  });

  test('the record shows every attempt and which one answered', async () => {
    const rows = await stack.db.sql<{ extra: any }[]>`select extra from request_log where path = '/router/failover/chat/completions'`;
    const multi = rows.filter((r) => r.extra.attempts.length > 1);
    assert.ok(multi.length > 0, 'some requests needed more than one attempt');
    for (const r of multi) {
      const a = r.extra.attempts as Array<{ provider: string; status: number }>;
      assert.equal(a.at(-1)!.provider, 'openai');
      assert.equal(a.at(-1)!.status, 200);
      for (const failed of a.slice(0, -1)) assert.ok(failed.status === 0 || failed.status === 429 || failed.status >= 500, JSON.stringify(a));
      assert.equal(new Set(a.map((x) => x.provider)).size, a.length, 'each retry went to another provider');
    }
  });

  test('retries exhausted: the last provider error is passed through', async () => {
    const res = await fetch(`${stack.gatewayUrl}/router/all-bad/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(res.status, 500);
    await res.arrayBuffer();
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    const rows = await stack.db.sql<{ extra: any }[]>`select extra from request_log where id = ${rec.request_id}`;
    assert.equal(rows[0]!.extra.attempts.length, 3, 'one try and two retries');
  });

  test('a stream already started is not retried: the client gets an SSE error event', async () => {
    const res = await fetch(`${stack.gatewayUrl}/router/streams/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'xai/grok-3', messages: [{ role: 'user', content: 'x' }], stream: true }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /"role":"assistant"/, 'the first events arrived');
    assert.match(text, /data: \{"error":/, 'then an error event');
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    const rows = await stack.db.sql<{ extra: any; error: any }[]>`select extra, error from request_log where id = ${rec.request_id}`;
    assert.equal(rows[0]!.extra.attempts.length, 1);
    assert.ok(rows[0]!.error);
    assert.ok(rec.llmSchema.response.error.svcMessage);
  });

  test('weighted router spreads requests over its providers', async () => {
    const seen = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const { response } = await client('/router/weighted').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }).withResponse();
      const p = response.headers.get('svc-provider')!;
      seen.set(p, (seen.get(p) ?? 0) + 1);
    }
    // Binomial(40, 0.5): each side gets at least 5 with probability > 0.9999999.
    assert.ok((seen.get('openai') ?? 0) >= 5 && (seen.get('deepseek') ?? 0) >= 5, JSON.stringify([...seen]));
  });
});

describe('provider quirks through the openai client', () => {
  test('a Groq stream that errors midway: the client gets the error, the record keeps it', async () => {
    const { data: stream, response } = await client('/ai')
      .chat.completions.create({ model: 'openai/groq-stream-error', messages: [{ role: 'user', content: 'x' }], stream: true })
      .withResponse();
    let chunks = 0;
    await assert.rejects(async () => {
      for await (const _ of stream) chunks++;
    }, /tool_use_failed|Failed to call a function|error/i);
    assert.ok(chunks > 0, 'chunks arrived before the error');
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.match(JSON.stringify(rec.llmSchema.response.error.svcMessage), /tool_use_failed/);
  });

  test('DeepSeek reasoning content is streamed through and logged', async () => {
    const { data: stream, response } = await client('/ai')
      .chat.completions.create({ model: 'deepseek/deepseek-reasoner', messages: [{ role: 'user', content: 'think' }], stream: true })
      .withResponse();
    let reasoning = '';
    for await (const chunk of stream) reasoning += (chunk.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? '';
    assert.ok(reasoning.length > 100);
    const rec = await fetchRecord(stack, response.headers.get('svc-id')!);
    assert.ok(rec.llmSchema.response.messages[0].reasoning.length > 100);
    assert.ok(rec.reasoning_tokens > 0);
    assert.equal(rec.provider, 'DEEPSEEK');
    assert.equal(rec.properties['svc-tokens-source'], 'provider');
  });
});

describe('Azure OpenAI and provider errors', () => {
  test('Azure: deployment URL, api-version and api-key header; answers stream through', async () => {
    const data = await client('/ai').chat.completions.create({ model: 'azure/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
    const sent = await lastUpstream();
    assert.equal(sent.url, '/openai/deployments/prod-mini/chat/completions?api-version=2024-10-21');
    assert.equal(sent.headers['api-key'], 'azure-provider-secret');
    assert.equal(sent.headers.authorization, undefined);
    assert.equal(sent.headers['content-length'], String(Buffer.byteLength(JSON.stringify(sent.body))));
    const stream = await client('/ai').chat.completions.create({ model: 'azure/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, 'The capital of the UK is London.');
  });

  test("Anthropic's overloaded error maps to OpenAI's shape with the provider's status", async () => {
    await assert.rejects(
      client('/ai').chat.completions.create({ model: 'anthropic/error-529', messages: [{ role: 'user', content: 'x' }] }),
      (err: any) => err.status === 529 && err.error?.type === 'server_error' && /Overloaded/.test(err.message),
    );
  });
});
