/**
 * End-to-end: reasoning state the gateway made itself never reaches a first-party provider, which
 * would refuse it (OpenAI: `404 Item with id 'rs_…' not found` for an id it never issued; Anthropic:
 * a 400 for a thinking block whose signature it did not sign), and the stored-response calls on a
 * response id the gateway minted are answered here, not sent to OpenAI. Through real processes,
 * with the stub recording what OpenAI, Anthropic and Bedrock received:
 * - a Responses request to OpenAI (passthrough) carrying the gateway's reasoning items (its
 *   `rs_<32 hex>_<n>` id, its `gateway-reasoning:` encrypted content) arrives without them, the
 *   removals named in `Svc-Removed-Members` as the client sent them; OpenAI's own item is kept;
 * - a conversation the gateway made with a translated provider (`previous_response_id`), continued
 *   on OpenAI, arrives without the gateway's reasoning item;
 * - a Messages request to Anthropic and to Bedrock's Claude carrying the gateway's thinking blocks
 *   (`gateway-reasoning:` or empty signature) arrives without them; Anthropic's own block is kept;
 * - Claude Code's tool loop failing over to Anthropic with `thinking` enabled: the gateway's block in the
 *   final assistant message is removed and so is `thinking` (Anthropic requires that message to start with
 *   a thinking block when it is enabled), both named; Anthropic's own leading block keeps `thinking`;
 * - `GET`/`DELETE /v1/responses/<a minted id>` not in the store: OpenAI's 404, nothing sent upstream; an id
 *   of OpenAI's or Azure's form of the same length goes to OpenAI;
 * - count_tokens answers carry `Svc-Id` (the access log's id), and README says such requests are not logged.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { AWS_TEST_ENV, startStack, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({
    proxyEnv: AWS_TEST_ENV,
    config: (stub) => ({
      svc: { features: 'observability' },
      providers: {
        openai: { 'base-url': `${stub}/v1` },
        groq: { 'base-url': `${stub}/openai/v1` },
        deepseek: { 'base-url': stub },
        anthropic: { 'base-url': `${stub}/v1` },
        bedrock: { 'base-url': stub, region: 'us-east-1' },
      },
      'log-queue': { 'flush-interval': '20ms' },
    }),
  });
});
after(async () => {
  await stack?.stop();
});

const upstream = async (): Promise<any[]> => (await (await fetch(`${stack.stubUrl}/__requests`)).json()) as any[];
const post = (path: string, body: unknown) =>
  fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

const HEX = '0123456789abcdef0123456789abcdef';
const CARRIER = `gateway-reasoning:${Buffer.from(JSON.stringify({ google: { message: 'sig' } })).toString('base64url')}`;
/** An item OpenAI issued (recorded: test/fixtures/providers/openai/responses-reasoning.json). */
const OPENAI_ITEM = { id: 'rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff', type: 'reasoning', summary: [], encrypted_content: 'gAAAAABoxC0dRealOpenAIContent==' };

describe('the gateway’s reasoning items never reach OpenAI', () => {
  test('client-sent items: the gateway’s removed and named, OpenAI’s kept', async () => {
    const input = [
      { role: 'user', content: 'hi' },
      { id: `rs_${HEX}_0`, type: 'reasoning', summary: [{ type: 'summary_text', text: 'Anthropic thought' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] },
      { id: `rs_${HEX}_2`, type: 'reasoning', summary: [], encrypted_content: CARRIER },
      { type: 'reasoning', summary: [], encrypted_content: CARRIER },
      OPENAI_ITEM,
      { role: 'user', content: 'and?' },
    ];
    const res = await post('/ai/responses', { model: 'openai/gpt-4.1-nano', input, store: false });
    assert.equal(res.status, 200);
    await res.arrayBuffer();
    assert.equal(res.headers.get('svc-removed-members'), 'input[1], input[3], input[4]');
    const sent = (await upstream()).at(-1);
    assert.equal(sent.url, '/v1/responses');
    assert.deepEqual(sent.body.input, [input[0], input[2], OPENAI_ITEM, input[6]]);
  });

  test('a request without the gateway’s items goes as its bytes, with no Svc-Removed-Members', async () => {
    const res = await post('/ai/responses', { model: 'openai/gpt-4.1-nano', input: [{ role: 'user', content: 'hi' }, OPENAI_ITEM], store: false });
    await res.arrayBuffer();
    assert.equal(res.headers.get('svc-removed-members'), null);
    assert.deepEqual((await upstream()).at(-1).body.input[1], OPENAI_ITEM);
  });

  test('a conversation made on a translated provider, continued on OpenAI: its reasoning item left out', async () => {
    const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey, maxRetries: 0 });
    const made = await client.responses.create({ model: 'deepseek/deepseek-reasoner', input: 'What is 2+2?' });
    const reasoning = made.output.findIndex((i) => i.type === 'reasoning');
    assert.ok(reasoning >= 0, 'the translated answer has a reasoning item the gateway minted');
    const { response } = await client.responses.create({ model: 'openai/gpt-4.1-nano', previous_response_id: made.id, input: 'And 3+3?' }).withResponse();
    const sent = (await upstream()).at(-1);
    assert.equal(sent.url, '/v1/responses');
    assert.ok(!sent.body.input.some((i: any) => i.type === 'reasoning'), 'no reasoning item reached OpenAI');
    assert.ok(sent.body.input.some((i: any) => i.type === 'message' && i.role === 'assistant'), 'the answer itself did');
    assert.equal(sent.body.previous_response_id, undefined);
    assert.match(response.headers.get('svc-removed-members') ?? '', /^previous_response_id\.input\[\d+\]$/);
  });
});

describe('the gateway’s thinking blocks never reach Anthropic', () => {
  const messages = [
    { role: 'user', content: 'hi' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'gemini thought', signature: CARRIER },
        { type: 'thinking', thinking: 'deepseek thought', signature: '' },
        { type: 'thinking', thinking: 'claude thought', signature: 'EqQBCkYIBxgCKkBAnthropicSigned' },
        { type: 'text', text: 'hello' },
      ],
    },
    { role: 'user', content: 'and?' },
  ];
  for (const [model, url] of [
    ['anthropic/claude-sonnet-4-5', '/v1/messages'],
    ['bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0', '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke'],
  ] as const) {
    test(`${model}: the gateway’s blocks removed and named, Anthropic’s kept`, async () => {
      const res = await post('/ai/v1/messages', { model, max_tokens: 64, messages });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      assert.match(res.headers.get('svc-removed-members') ?? '', /^messages\[1\]\.content\[0\], messages\[1\]\.content\[1\]/);
      const sent = (await upstream()).at(-1);
      assert.equal(sent.url, url);
      assert.deepEqual(sent.body.messages[1].content, messages[1]!.content.slice(2));
    });
  }
});

describe('a tool loop failing over to Anthropic with thinking enabled', () => {
  // Claude Code's turn after a translated provider's tool call: Anthropic requires the final assistant
  // message to start with a thinking block when `thinking` is enabled, so removing the gateway's block
  // there removes `thinking` too (else Anthropic answers 400).
  const messages = [
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'gemini thought', signature: CARRIER },
        { type: 'tool_use', id: 'toolu_01', name: 'weather', input: { city: 'Paris' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'sunny' }] },
  ];
  for (const thinking of [{ type: 'enabled', budget_tokens: 1024 }, { type: 'adaptive' }]) {
    test(`thinking ${thinking.type}: the block and \`thinking\` removed, both named`, async () => {
      const res = await post('/ai/v1/messages', { model: 'anthropic/claude-sonnet-4-5', max_tokens: 2048, thinking, messages });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      assert.equal(res.headers.get('svc-removed-members'), 'messages[1].content[0], thinking');
      const sent = (await upstream()).at(-1);
      assert.equal(sent.url, '/v1/messages');
      assert.equal(sent.body.thinking, undefined);
      assert.deepEqual(sent.body.messages, [messages[0], { role: 'assistant', content: [messages[1]!.content[1]] }, messages[2]]);
    });
  }

  test('a later step of that loop (Anthropic’s tool_use without thinking): `thinking` removed too', async () => {
    const step = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_02', name: 'weather', input: { city: 'Lyon' } }] };
    const answer = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_02', content: 'rain' }] };
    const res = await post('/ai/v1/messages', { model: 'anthropic/claude-sonnet-4-5', max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [...messages, step, answer] });
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    assert.equal(res.headers.get('svc-removed-members'), 'messages[1].content[0], thinking');
    assert.equal((await upstream()).at(-1).body.thinking, undefined);
  });

  test('a final assistant message still led by Anthropic’s own thinking block keeps `thinking`', async () => {
    const own = { type: 'thinking', thinking: 'claude thought', signature: 'EqQBCkYIBxgCKkBAnthropicSigned' };
    const turn = { role: 'assistant', content: [own, ...messages[1]!.content as object[]] };
    const thinking = { type: 'enabled', budget_tokens: 1024 };
    const res = await post('/ai/v1/messages', { model: 'anthropic/claude-sonnet-4-5', max_tokens: 2048, thinking, messages: [messages[0], turn, messages[2]] });
    assert.equal(res.status, 200, await res.clone().text());
    await res.arrayBuffer();
    assert.equal(res.headers.get('svc-removed-members'), 'messages[1].content[1]');
    const sent = (await upstream()).at(-1);
    assert.deepEqual(sent.body.thinking, thinking);
    assert.deepEqual(sent.body.messages[1].content, [own, messages[1]!.content[1]]);
  });
});

describe('stored-response calls on an id the gateway minted', () => {
  for (const method of ['GET', 'DELETE']) {
    test(`${method}: OpenAI's 404 from the gateway, nothing sent to OpenAI`, async () => {
      const before = (await upstream()).length;
      // The gateway's form: its request id, a UUID v4, without dashes.
      const id = `resp_${randomUUID().replace(/-/g, '')}`;
      const res = await fetch(`${stack.gatewayUrl}/v1/responses/${id}`, { method, headers: { authorization: `Bearer ${stack.apiKey}` } });
      assert.equal(res.status, 404);
      const body = (await res.json()) as { error: { message: string; type: string } };
      assert.equal(body.error.message, `Response with id '${id}' not found.`);
      assert.equal(body.error.type, 'invalid_request_error');
      assert.equal((await upstream()).length, before);
    });
  }
});

describe('stored-response calls on a provider’s id of the same length', () => {
  // Azure's documented ids of the Responses API's first months were `resp_` and 32 hex
  // (learn.microsoft.com, Azure OpenAI "Responses API"): such an id is the provider's to answer.
  test('GET resp_67cb32528d6881909eb2859a55e18a85 goes to OpenAI', async () => {
    const id = 'resp_67cb32528d6881909eb2859a55e18a85';
    const res = await fetch(`${stack.gatewayUrl}/v1/responses/${id}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    await res.arrayBuffer();
    const sent = (await upstream()).at(-1);
    assert.equal(sent.url, `/v1/responses/${id}`);
    assert.equal(sent.method, 'GET');
  });
});

describe('count_tokens and Svc-Id', () => {
  test('the answer carries Svc-Id; README names count_tokens among the requests that are not logged', async () => {
    const res = await post('/ai/v1/messages/count_tokens', { model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('svc-id') ?? '', /^[0-9a-f-]{36}$/);
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const sentence = readme.slice(readme.indexOf('Every response carries `Svc-Id`'), readme.indexOf('Every response carries `Svc-Id`') + 600);
    assert.match(sentence, /count_tokens/, 'README says which responses cannot be read back');
  });
});
