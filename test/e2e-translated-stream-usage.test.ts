/**
 * End-to-end: the usage chunk of a chat-completions stream translated from Anthropic's Messages stream and Bedrock's
 * ConverseStream follows OpenAI's `stream_options.include_usage` (OpenAI API reference, chat create →
 * `stream_options.include_usage`: "an additional chunk will be streamed before the data: [DONE] message. The usage
 * field on this chunk shows the token usage statistics for the entire request, and the choices field will always be
 * an empty array. All other chunks will also include a usage field, but with a null value"), through the running
 * stack (admin on PostgreSQL, the proxy, test/support/stub-upstream.ts playing Anthropic with its recorded stream,
 * test/support/bedrock-stub.ts playing Bedrock), driven by the `openai` SDK:
 *
 * - without `include_usage` no chunk has empty choices and none has `usage` (OpenAI's quickstart reads
 *   `chunk.choices[0].delta.content` of every chunk), and the request's log record still has the provider's tokens
 *   and their cost;
 * - with it every chunk has `usage: null` but the last, which has `choices: []` and the usage;
 * - a cached translated stream without `include_usage` (`Svc-Cache-Enabled`, memory store and Redis): the hit's log
 *   record has the tokens of the answer it replays, and the cost it saved;
 * - Responses → Anthropic and → Bedrock (through the chat translators) still get their usage in
 *   `response.completed`, and the log record its tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { AWS_TEST_ENV, fetchRecord, PROVIDER_KEYS, startLinkedProxy, startStubbedStack, stopProcess, uniq, writeConfig, type Started, type StubbedStack } from './support/stack.ts';

type Json = Record<string, any>;

/** The config of the stack; `cache` added for the gateway keeping its cache in Redis. */
const config = (bedrockStub: string, stackStub: string, cache?: Json): Json => ({
  providers: { anthropic: { 'base-url': `${stackStub}/v1` }, bedrock: { 'base-url': bedrockStub, region: 'us-east-1' } },
  ...(cache ? { svc: { features: 'observability' }, 'log-queue': { 'flush-interval': '20ms' }, cache } : {}),
});

let env: StubbedStack;
/** A second gateway of the same admin whose cache is in Redis. */
let redisProxy: Started & { url: string };

before(async () => {
  env = await startStubbedStack('test/support/bedrock-stub.ts', (stub, stackStub) => config(stub, stackStub), AWS_TEST_ENV);
  const stackStub = env.stack.stubUrl;
  const file = writeConfig(config(env.stubUrl, stackStub, { store: 'redis', url: 'redis://127.0.0.1:6379', timeout: '500ms' }));
  redisProxy = await startLinkedProxy({ adminPort: env.stack.admin.port, apiKey: env.stack.apiKey, configFile: file, env: { ...PROVIDER_KEYS, ...AWS_TEST_ENV } });
});
after(async () => {
  await stopProcess(redisProxy);
  await env?.stop();
});

/** An `openai` SDK client of `base`'s `/ai` path (the stack's gateway by default). */
const client = (base = env.stack.gatewayUrl): OpenAI => new OpenAI({ baseURL: `${base}/ai`, apiKey: env.stack.apiKey, maxRetries: 0 });

/** The two translated providers: the model asked, and the tokens their recorded answers report. */
const CASES = [
  { name: 'anthropic', model: 'anthropic/claude-sonnet-4-5', prompt: 20, completion: 5 },
  { name: 'bedrock', model: 'bedrock/us.amazon.nova-micro-v1:0', prompt: 7, completion: 30 },
];

/** Streams a chat completion of `model` (a question unique to the call): the chunks as the SDK parsed them, and the request id. */
async function stream(model: string, extra: { question?: string } = {}, headers: Record<string, string> = {}, base?: string): Promise<{ chunks: Json[]; id: string; cache: string | null; text: string }> {
  const { data, response } = await client(base)
    .chat.completions.create({ model, messages: [{ role: 'user', content: `hi ${extra.question ?? uniq()}` }], stream: true }, { headers })
    .withResponse();
  const chunks: Json[] = [];
  let text = '';
  for await (const chunk of data) {
    chunks.push(chunk as unknown as Json);
    // OpenAI's quickstart: every chunk has a choice.
    text += chunk.choices[0]!.delta.content ?? '';
  }
  return { chunks, id: response.headers.get('svc-id')!, cache: response.headers.get('svc-cache'), text };
}

/** The logged tokens and cost of request `id` (of the stack's admin). */
async function logged(id: string): Promise<{ prompt: number; completion: number; cost: number | null }> {
  const r = await fetchRecord(env.stack, id);
  return { prompt: r.prompt_tokens, completion: r.completion_tokens, cost: r.cost === null ? null : Number(r.cost) };
}

for (const c of CASES) {
  describe(`chat completions → ${c.name}, streamed`, () => {
    test('without include_usage: no usage chunk and no usage member reach the client; the record still has the tokens and their cost', async () => {
      const s = await stream(c.model);
      assert.ok(s.text.length > 0, 'the answer has text');
      assert.ok(s.chunks.length > 1);
      for (const chunk of s.chunks) {
        assert.ok(chunk.choices.length > 0, `a chunk with empty choices: ${JSON.stringify(chunk)}`);
        assert.equal('usage' in chunk, false, `a chunk with usage: ${JSON.stringify(chunk)}`);
      }
      const rec = await logged(s.id);
      assert.equal(rec.prompt, c.prompt);
      assert.equal(rec.completion, c.completion);
      assert.ok(rec.cost !== null && rec.cost > 0, `cost ${rec.cost}`);
    });

    test('with include_usage: every chunk has usage null but the last, which has choices [] and the usage', async () => {
      const { data, response } = await client()
        .chat.completions.create({ model: c.model, messages: [{ role: 'user', content: `hi ${uniq()}` }], stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const chunks: Json[] = [];
      for await (const chunk of data) chunks.push(chunk as unknown as Json);
      const last = chunks.pop()!;
      assert.ok(chunks.length > 0);
      for (const chunk of chunks) {
        assert.ok(chunk.choices.length > 0, JSON.stringify(chunk));
        assert.equal(chunk.usage, null, `usage of ${JSON.stringify(chunk)}`);
      }
      assert.deepEqual(last.choices, []);
      assert.equal(last.usage.prompt_tokens, c.prompt);
      assert.equal(last.usage.completion_tokens, c.completion);
      const rec = await logged(response.headers.get('svc-id')!);
      assert.equal(rec.prompt, c.prompt);
      assert.equal(rec.completion, c.completion);
    });

    for (const store of ['memory', 'redis'] as const) {
      test(`cached (${store} store) without include_usage: the hit's record has the tokens of the answer it replays`, async () => {
        const base = store === 'redis' ? redisProxy.url : undefined;
        const question = uniq();
        const headers = { 'svc-cache-enabled': 'true' };
        const miss = await stream(c.model, { question }, headers, base);
        assert.equal(miss.cache, 'MISS');
        // The miss's answer is stored once its response is over (Redis: a write under way).
        let hit = await stream(c.model, { question }, headers, base);
        for (let i = 0; hit.cache !== 'HIT' && i < 20; i++) {
          await new Promise((r) => setTimeout(r, 50));
          hit = await stream(c.model, { question }, headers, base);
        }
        assert.equal(hit.cache, 'HIT');
        assert.equal(hit.text, miss.text);
        for (const chunk of hit.chunks) assert.ok(chunk.choices.length > 0 && !('usage' in chunk), JSON.stringify(chunk));
        const rec = await fetchRecord(env.stack, hit.id);
        assert.equal(rec.cache_reference_id, miss.id);
        assert.equal(rec.prompt_tokens, c.prompt);
        assert.equal(rec.completion_tokens, c.completion);
        // A hit costs nothing and keeps what it saved: the cost of the miss's tokens.
        const original = await logged(miss.id);
        assert.ok(original.cost !== null && original.cost > 0, `cost ${original.cost}`);
        assert.equal(Number(rec.cost), 0);
        assert.equal(Number(rec.properties['svc-cache-cost-saved']), original.cost);
      });
    }
  });

  test(`Responses → ${c.name}, streamed: response.completed has the usage, the record the tokens`, async () => {
    const events: Json[] = [];
    const { data, response } = await client()
      .responses.create({ model: c.model, input: `hi ${uniq()}`, stream: true })
      .withResponse();
    for await (const event of data) events.push(event as unknown as Json);
    const completed = events.find((e) => e.type === 'response.completed');
    assert.ok(completed, 'a response.completed event');
    assert.equal(completed.response.usage.input_tokens, c.prompt);
    assert.equal(completed.response.usage.output_tokens, c.completion);
    const rec = await logged(response.headers.get('svc-id')!);
    assert.equal(rec.prompt, c.prompt);
    assert.equal(rec.completion, c.completion);
  });
}
