/**
 * End-to-end: the response cache (issue 18) read by the clients people use, each given nothing but
 * the gateway's base URL, the service key and `Svc-Cache-Enabled: true` as a default header: the
 * `openai` SDK (chat completions, streamed and not, embeddings, Responses), the Anthropic SDK
 * (`messages.create` and `messages.stream`, passed through and translated to chat completions), the
 * Vercel AI SDK (`generateText` and `streamText` on Responses) and LangChain's `ChatOpenAI`.
 *
 * For each: the first call is a miss that reaches the stub provider, the second a hit that does not
 * (the stub's request log), and the client reads the hit exactly as it read the miss (text, usage,
 * events in order), so a replay a client cannot parse, or parses differently, fails here.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { startStack, stubRequests, uniq, type Stack } from './support/stack.ts';

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(() => stack?.stop());

const CACHE_ON = { 'svc-cache-enabled': 'true' };

/** How many requests the stub has received. */
const upstreamCount = async (): Promise<number> => (await stubRequests(stack.stubUrl)).length;

/**
 * Runs `call` twice: the first must reach the provider once, the second not at all.
 * @returns both results.
 */
async function missThenHit<T>(call: () => Promise<T>): Promise<[T, T]> {
  const start = await upstreamCount();
  const miss = await call();
  assert.equal((await upstreamCount()) - start, 1, 'the miss reached the provider once');
  const hit = await call();
  assert.equal((await upstreamCount()) - start, 1, 'the hit did not reach the provider');
  return [miss, hit];
}

const openai = (path = '/ai') => new OpenAI({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: stack.apiKey, maxRetries: 0, defaultHeaders: CACHE_ON });
const anthropic = () =>
  new Anthropic({ baseURL: stack.gatewayUrl, apiKey: null, authToken: null, maxRetries: 0, defaultHeaders: { 'x-api-key': stack.apiKey, ...CACHE_ON } });

describe('the openai SDK', () => {
  test('chat.completions.create: a hit is the same completion, marked HIT', async () => {
    const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: `sdk ${uniq()}` }] };
    const [miss, hit] = await missThenHit(() => openai().chat.completions.create(body).withResponse());
    assert.equal(miss.response.headers.get('svc-cache'), 'MISS');
    assert.equal(hit.response.headers.get('svc-cache'), 'HIT');
    assert.deepEqual(hit.data, miss.data);
    assert.ok(hit.data.choices[0]!.message.content, 'a completion with text');
  });

  test('chat.completions.create with stream: the hit is read chunk by chunk as the miss was', async () => {
    const body = { model: 'openai/gpt-4o-mini', stream: true as const, messages: [{ role: 'user' as const, content: `sdk stream ${uniq()}` }] };
    const read = async () => {
      const { data, response } = await openai().chat.completions.create(body).withResponse();
      const chunks = [];
      for await (const chunk of data) chunks.push(chunk);
      return { cache: response.headers.get('svc-cache'), chunks };
    };
    const [miss, hit] = await missThenHit(read);
    assert.deepEqual([miss.cache, hit.cache], ['MISS', 'HIT']);
    assert.ok(miss.chunks.length > 1, `streamed in chunks: ${miss.chunks.length}`);
    assert.deepEqual(hit.chunks, miss.chunks);
  });

  test('embeddings.create (base64, the SDK default, decoded by it): the hit is the same vector', async () => {
    const input = `embed ${uniq()}`;
    const [miss, hit] = await missThenHit(() => openai().embeddings.create({ model: 'openai/text-embedding-3-small', input }).withResponse());
    assert.equal(hit.response.headers.get('svc-cache'), 'HIT');
    assert.ok(miss.data.data[0]!.embedding.length > 0);
    assert.deepEqual(hit.data, miss.data);
  });

  test('responses.create, not streamed and streamed: the hit is the same response and the same events', async () => {
    const input = `responses ${uniq()}`;
    const [miss, hit] = await missThenHit(() => openai('/v1').responses.create({ model: 'openai/gpt-4.1-nano', input }).withResponse());
    assert.equal(hit.response.headers.get('svc-cache'), 'HIT');
    assert.deepEqual(hit.data, miss.data);
    assert.ok(hit.data.output_text, 'the SDK reads the text');
    const events = async () => {
      const out = [];
      for await (const event of await openai('/v1').responses.create({ model: 'openai/gpt-4.1-nano', input, stream: true })) out.push(event);
      return out;
    };
    const [missEvents, hitEvents] = await missThenHit(events);
    assert.ok(missEvents.some((e) => e.type === 'response.completed'), 'the stream ends with response.completed');
    assert.deepEqual(hitEvents, missEvents);
  });
});

describe('the Anthropic SDK', () => {
  for (const [how, model] of [
    ['passed through to Anthropic', 'claude-sonnet-4-5'],
    ['translated to chat completions', 'openai/gpt-4o-mini'],
  ] as const) {
    test(`messages.create and messages.stream, ${how}: each hit is the message the miss was`, async () => {
      const params = { model, max_tokens: 100, messages: [{ role: 'user' as const, content: `anthropic ${uniq()}` }] };
      const [miss, hit] = await missThenHit(() => anthropic().messages.create(params).withResponse());
      assert.equal(hit.response.headers.get('svc-cache'), 'HIT');
      assert.deepEqual(hit.data, miss.data);
      const streamed = async () => {
        const stream = anthropic().messages.stream(params);
        const texts: string[] = [];
        stream.on('text', (t) => texts.push(t));
        return { message: await stream.finalMessage(), texts };
      };
      const [missStream, hitStream] = await missThenHit(streamed);
      assert.ok(missStream.texts.length > 0, 'text deltas');
      assert.deepEqual(hitStream, missStream);
    });
  }
});

describe('the Vercel AI SDK and LangChain', () => {
  const aiSdk = () => createOpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey, headers: CACHE_ON });

  test('generateText and streamText (Responses): each hit reads as the miss did', async () => {
    const prompt = `ai sdk ${uniq()}`;
    const generate = () => generateText({ model: aiSdk()('openai/gpt-4o-mini'), prompt, maxRetries: 0 });
    const [miss, hit] = await missThenHit(generate);
    assert.equal(hit.response.headers?.['svc-cache'], 'HIT');
    assert.equal(hit.text, miss.text);
    assert.deepEqual(hit.usage, miss.usage);
    const stream = async () => {
      const s = streamText({ model: aiSdk()('openai/gpt-4o-mini'), prompt, maxRetries: 0 });
      const parts: string[] = [];
      for await (const delta of s.textStream) parts.push(delta);
      return { parts, usage: await s.usage };
    };
    const [missStream, hitStream] = await missThenHit(stream);
    assert.ok(missStream.parts.length > 1, 'streamed in pieces');
    assert.deepEqual(hitStream, missStream);
  });

  test('ChatOpenAI invoke: the hit is the same answer', async () => {
    const model = new ChatOpenAI({ model: 'openai/gpt-4o-mini', apiKey: stack.apiKey, maxRetries: 0, configuration: { baseURL: `${stack.gatewayUrl}/ai`, defaultHeaders: CACHE_ON } });
    const question = `langchain ${uniq()}`;
    const [miss, hit] = await missThenHit(() => model.invoke(question));
    assert.ok(miss.text, 'an answer');
    assert.equal(hit.text, miss.text);
    assert.deepEqual(hit.usage_metadata, miss.usage_metadata);
  });
});
