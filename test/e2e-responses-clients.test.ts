/**
 * End-to-end: the OpenAI Responses clients people use, pointed at the gateway with nothing but a
 * base URL and the service key, against real processes (admin, the proxy, and
 * test/support/responses-stub.ts playing OpenAI's Responses API and an OpenAI-compatible chat
 * provider from the recorded fixtures):
 *
 * - the Vercel AI SDK's default provider (`createOpenAI({baseURL}); openai(model)`, which in AI SDK 6
 *   calls the Responses API) with `generateText` and `streamText`, passthrough to OpenAI and translation
 *   to Groq's chat completions, and a tool the SDK runs between two steps;
 * - LangChain's `ChatOpenAI({useResponsesApi: true})`, `invoke` and `stream`, both ways;
 * - the OpenAI Agents SDK running an agent with one function tool, both ways, run and streamed: the
 *   stub answers a function call, the SDK runs the tool and sends its `function_call_output`, the stub
 *   answers the final text.
 *
 * Each test asserts what the client returned and what reached the provider (path, model, the tool
 * result sent back), so a client reading the gateway's answer wrongly, or a gateway sending the
 * provider the wrong thing, fails it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool as agentTool } from '@openai/agents';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { clearStubRequests, fetchRecord, PROVIDER_KEYS, startStubbedStack, stubRequests, type Stack, type StubbedStack } from './support/stack.ts';

type Json = Record<string, any>;

const fixture = (p: string): Json => JSON.parse(readFileSync(new URL(`./fixtures/providers/${p}`, import.meta.url), 'utf8'));
/** The texts and usage of the stub's recorded answers (test/support/responses-stub.ts). */
const RESPONSES_TEXT = 'The capital of France is Paris.'; // openai/responses-text.json
const RESPONSES_STREAM_TEXT = '2 + 2 equals 4.'; // openai/responses-stream.sse
const CHAT_TEXT = 'The capital of France is Paris.'; // openai/chat-completion.json
const CHAT_STREAM_TEXT = 'The capital of the UK is London.'; // openai/chat-completion-stream.sse
const RECORDED_REQUEST_ID = (fixture('openai/responses-text.headers.json') as Record<string, string[]>)['x-request-id']![0]!;
/** The stub's function-call script (test/support/responses-stub.ts). */
const CALL_MARKER = 'Call the function ';
const FINAL_PREFIX = 'The function returned: ';
const CALL_ID = 'call_stub_responses_1';

/** The chat provider of the translation tests, and its model. */
const GROQ_MODEL = 'llama-3.3-70b-versatile';

let stubbed: StubbedStack;
let stack: Stack;

before(async () => {
  // The Agents SDK exports traces to api.openai.com unless told not to; these tests stay offline.
  setTracingDisabled(true);
  stubbed = await startStubbedStack('test/support/responses-stub.ts', (stub) => ({
    providers: { openai: { 'base-url': `${stub}/v1` }, groq: { 'base-url': `${stub}/openai/v1` } },
  }));
  stack = stubbed.stack;
});
after(() => stubbed?.stop());

/** What reached the stub since the last {@link clearUpstream}. */
const upstream = (): Promise<Json[]> => stubRequests(stubbed.stubUrl);
const clearUpstream = (): Promise<void> => clearStubRequests(stubbed.stubUrl);

/** The one request that reached the stub, checked to be at `url`. */
async function onlyUpstream(url: string): Promise<Json> {
  const sent = await upstream();
  assert.deepEqual(
    sent.map((r) => `${r.method} ${r.url}`),
    [`POST ${url}`],
  );
  return sent[0]!;
}

/** Asserts a request reached the chat provider (Groq at the stub) as a chat completion of `GROQ_MODEL`. */
function assertChatUpstream(req: Json, stream: boolean): void {
  assert.equal(req.body.model, GROQ_MODEL);
  assert.equal(req.body.stream === true, stream);
  assert.equal(req.headers.authorization, `Bearer ${PROVIDER_KEYS.GROQ_API_KEY}`);
  assert.ok(Array.isArray(req.body.messages), 'a chat body');
  assert.equal(req.body.input, undefined, 'no Responses member goes to a chat provider');
}

/** The AI SDK's default OpenAI provider on the gateway's `/ai` base URL. */
const aiSdk = () => createOpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey });

describe('the Vercel AI SDK default provider (openai(model) calls the Responses API)', () => {
  test('generateText, passthrough: POST /responses reaches OpenAI; the text, usage and OpenAI\'s x-request-id come back; logged as responses', async () => {
    await clearUpstream();
    const r = await generateText({ model: aiSdk()('openai/gpt-4o-mini'), prompt: 'What is the capital of France?', maxRetries: 0 });
    assert.equal(r.text, RESPONSES_TEXT);
    assert.deepEqual([r.usage.inputTokens, r.usage.outputTokens], [14, 8]);
    const headers = r.response.headers ?? {};
    assert.equal(headers['x-request-id'], RECORDED_REQUEST_ID, "OpenAI's response headers reach the client");
    assert.equal(headers['svc-provider'], 'openai');
    const req = await onlyUpstream('/v1/responses');
    assert.equal(req.body.model, 'gpt-4o-mini', 'the provider prefix is taken off');
    assert.equal(req.body.input[0].role, 'user');
    assert.equal(req.headers.authorization, `Bearer ${PROVIDER_KEYS.OPENAI_API_KEY}`);
    const rec = await fetchRecord(stack, headers['svc-id']!);
    assert.equal(rec.provider, 'OPENAI');
    assert.equal(rec.request_properties['svc-endpoint'], 'responses');
    assert.deepEqual([rec.prompt_tokens, rec.completion_tokens], [14, 8]);
  });

  test('streamText, passthrough: the recorded stream token by token, its usage', async () => {
    await clearUpstream();
    const s = streamText({ model: aiSdk()('openai/gpt-4o-mini'), prompt: 'What is 2+2?', maxRetries: 0 });
    const parts: string[] = [];
    for await (const delta of s.textStream) parts.push(delta);
    assert.equal(parts.join(''), RESPONSES_STREAM_TEXT);
    assert.ok(parts.length > 1, `streamed in pieces: ${JSON.stringify(parts)}`);
    const usage = await s.usage;
    assert.deepEqual([usage.inputTokens, usage.outputTokens], [14, 9]);
    const req = await onlyUpstream('/v1/responses');
    assert.equal(req.body.stream, true);
    assert.equal(req.body.model, 'gpt-4o-mini');
  });

  test('generateText, translated: openai("groq/…") reaches Groq as a chat completion and reads its answer', async () => {
    await clearUpstream();
    const r = await generateText({ model: aiSdk()(`groq/${GROQ_MODEL}`), prompt: 'What is the capital of France?', maxRetries: 0 });
    assert.equal(r.text, CHAT_TEXT);
    assert.equal(r.finishReason, 'stop');
    assert.deepEqual([r.usage.inputTokens, r.usage.outputTokens], [24, 8]);
    assert.equal(r.response.headers?.['svc-provider'], 'groq');
    const req = await onlyUpstream('/openai/v1/chat/completions');
    assertChatUpstream(req, false);
    assert.deepEqual(req.body.messages.at(-1), { role: 'user', content: 'What is the capital of France?' });
  });

  test('a second turn, translated: the SDK names its earlier answer by item_reference (store on, its default), and Groq gets the answer itself', async () => {
    const first = await generateText({ model: aiSdk()(`groq/${GROQ_MODEL}`), prompt: 'What is the capital of France?', maxRetries: 0 });
    await clearUpstream();
    const second = await generateText({
      model: aiSdk()(`groq/${GROQ_MODEL}`),
      messages: [{ role: 'user', content: 'What is the capital of France?' }, ...first.response.messages, { role: 'user', content: 'And of Germany?' }],
      maxRetries: 0,
    });
    assert.equal(second.text, CHAT_TEXT);
    const req = await onlyUpstream('/openai/v1/chat/completions');
    assert.deepEqual(
      req.body.messages.map((m: Json) => [m.role, m.content]),
      [
        ['user', 'What is the capital of France?'],
        ['assistant', CHAT_TEXT],
        ['user', 'And of Germany?'],
      ],
    );
    const record = await fetchRecord(stack, second.response.headers!['svc-id']!);
    assert.ok(JSON.stringify(record).includes('item_reference'), 'the log keeps what the client sent');
  });

  test('streamText, translated: the chat stream becomes Responses events the SDK reads token by token', async () => {
    await clearUpstream();
    const s = streamText({ model: aiSdk()(`groq/${GROQ_MODEL}`), prompt: 'What is the capital of the UK?', maxRetries: 0 });
    const parts: string[] = [];
    for await (const delta of s.textStream) parts.push(delta);
    assert.equal(parts.join(''), CHAT_STREAM_TEXT);
    assert.ok(parts.length > 1, `streamed in pieces: ${JSON.stringify(parts)}`);
    const usage = await s.usage;
    assert.deepEqual([usage.inputTokens, usage.outputTokens], [78, 9]);
    assertChatUpstream(await onlyUpstream('/openai/v1/chat/completions'), true);
  });

  test('a tool the SDK runs between two steps, translated: the function call reaches the SDK, its output reaches Groq as a tool message', async () => {
    await clearUpstream();
    const seen: string[] = [];
    const r = await generateText({
      model: aiSdk()(`groq/${GROQ_MODEL}`),
      prompt: `${CALL_MARKER}get_weather with {"location":"Oslo"}`,
      tools: {
        get_weather: tool({
          description: 'The weather of a city',
          inputSchema: z.object({ location: z.string() }),
          execute: async ({ location }) => {
            seen.push(location);
            return `Snow in ${location}`;
          },
        }),
      },
      stopWhen: stepCountIs(2),
      maxRetries: 0,
    });
    assert.deepEqual(seen, ['Oslo'], 'the SDK ran the tool with the arguments the provider sent');
    assert.equal(r.text, `${FINAL_PREFIX}Snow in Oslo`);
    assert.equal(r.steps.length, 2);
    const sent = await upstream();
    assert.equal(sent.length, 2, `a call, then its result: ${JSON.stringify(sent.map((s) => s.url))}`);
    const [assistant, toolMessage] = sent[1]!.body.messages.slice(-2);
    assert.deepEqual(
      assistant.tool_calls.map((c: Json) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      [[CALL_ID, 'get_weather', { location: 'Oslo' }]],
    );
    assert.equal(toolMessage.role, 'tool');
    assert.equal(toolMessage.tool_call_id, CALL_ID);
    assert.equal(toolMessage.content, 'Snow in Oslo');
  });
});

/** LangChain's ChatOpenAI on the Responses API at the gateway's `/ai`. */
const langchain = (model: string) => new ChatOpenAI({ useResponsesApi: true, model, apiKey: stack.apiKey, maxRetries: 0, configuration: { baseURL: `${stack.gatewayUrl}/ai` } });

describe('LangChain ChatOpenAI with useResponsesApi', () => {
  test('passthrough: invoke and stream reach OpenAI at /responses and read its answers', async () => {
    await clearUpstream();
    const m = langchain('openai/gpt-4o-mini');
    const answer = await m.invoke('What is the capital of France?');
    assert.equal(answer.text, RESPONSES_TEXT);
    assert.deepEqual([answer.usage_metadata?.input_tokens, answer.usage_metadata?.output_tokens], [14, 8]);
    const parts: string[] = [];
    for await (const chunk of await m.stream('What is 2+2?')) parts.push(chunk.text);
    assert.equal(parts.join(''), RESPONSES_STREAM_TEXT);
    const sent = await upstream();
    assert.deepEqual(
      sent.map((r) => [r.url, r.body.model, r.body.stream === true]),
      [
        ['/v1/responses', 'gpt-4o-mini', false],
        ['/v1/responses', 'gpt-4o-mini', true],
      ],
    );
  });

  test('translated: invoke and stream reach Groq as chat completions and read its answers', async () => {
    await clearUpstream();
    const m = langchain(`groq/${GROQ_MODEL}`);
    const answer = await m.invoke('What is the capital of France?');
    assert.equal(answer.text, CHAT_TEXT);
    assert.deepEqual([answer.usage_metadata?.input_tokens, answer.usage_metadata?.output_tokens], [24, 8]);
    const parts: string[] = [];
    for await (const chunk of await m.stream('What is the capital of the UK?')) parts.push(chunk.text);
    assert.equal(parts.join(''), CHAT_STREAM_TEXT);
    const sent = await upstream();
    assert.deepEqual(
      sent.map((r) => r.url),
      ['/openai/v1/chat/completions', '/openai/v1/chat/completions'],
    );
    assertChatUpstream(sent[0]!, false);
    assertChatUpstream(sent[1]!, true);
  });
});

/** An Agents SDK runner whose OpenAI client is on the gateway at `path` (Responses API). */
const agentsRunner = (path: string) =>
  new Runner({ modelProvider: new OpenAIProvider({ openAIClient: new OpenAI({ baseURL: `${stack.gatewayUrl}${path}`, apiKey: stack.apiKey, maxRetries: 0 }), useResponses: true }) });

/** An agent with one function tool, `get_weather`, that notes each city it is called with. */
function weatherAgent(model: string): { agent: Agent; calls: string[] } {
  const calls: string[] = [];
  const getWeather = agentTool({
    name: 'get_weather',
    description: 'The weather of a city',
    parameters: z.object({ location: z.string() }),
    execute: async ({ location }) => {
      calls.push(location);
      return `Sunny in ${location}`;
    },
  });
  return { agent: new Agent({ name: 'Weather', instructions: 'Answer with the tools you have.', model, tools: [getWeather] }), calls };
}

const AGENT_WAYS = [
  { how: 'passthrough (base URL …/v1, a bare OpenAI model)', path: '/v1', model: 'gpt-4o-mini', url: '/v1/responses' },
  { how: `translated (base URL …/ai, groq/${GROQ_MODEL})`, path: '/ai', model: `groq/${GROQ_MODEL}`, url: '/openai/v1/chat/completions' },
] as const;

describe('the OpenAI Agents SDK running an agent with one function tool', () => {
  for (const way of AGENT_WAYS) {
    for (const stream of [false, true]) {
      test(`${way.how}, ${stream ? 'streamed' : 'run'}: the SDK runs the tool, sends its output back, and ends with the final answer`, async () => {
        await clearUpstream();
        const { agent, calls } = weatherAgent(way.model);
        const input = `${CALL_MARKER}get_weather with {"location":"Paris"}`;
        let finalOutput: unknown;
        if (stream) {
          const result = await agentsRunner(way.path).run(agent, input, { stream: true });
          let text = '';
          for await (const delta of result.toTextStream()) text += delta;
          await result.completed;
          assert.equal(text, `${FINAL_PREFIX}Sunny in Paris`, 'the final answer streamed');
          finalOutput = result.finalOutput;
        } else {
          finalOutput = (await agentsRunner(way.path).run(agent, input)).finalOutput;
        }
        assert.deepEqual(calls, ['Paris'], 'the tool ran once, with the arguments the provider sent');
        assert.equal(finalOutput, `${FINAL_PREFIX}Sunny in Paris`);

        const sent = await upstream();
        assert.deepEqual(
          sent.map((r) => [r.url, r.body.stream === true]),
          [
            [way.url, stream],
            [way.url, stream],
          ],
        );
        const second = sent[1]!.body;
        if (way.path === '/v1') {
          assert.equal(second.model, 'gpt-4o-mini');
          const call = second.input.find((i: Json) => i.type === 'function_call');
          assert.deepEqual([call.call_id, call.name, JSON.parse(call.arguments)], [CALL_ID, 'get_weather', { location: 'Paris' }]);
          const output = second.input.at(-1);
          assert.deepEqual([output.type, output.call_id, output.output], ['function_call_output', CALL_ID, 'Sunny in Paris']);
        } else {
          assertChatUpstream(sent[1]!, stream);
          const [assistant, toolMessage] = second.messages.slice(-2);
          assert.deepEqual(
            assistant.tool_calls.map((c: Json) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
            [[CALL_ID, 'get_weather', { location: 'Paris' }]],
          );
          assert.deepEqual([toolMessage.role, toolMessage.tool_call_id, toolMessage.content], ['tool', CALL_ID, 'Sunny in Paris']);
          assert.equal(second.tools[0].function.name, 'get_weather', 'the agent\'s tool is offered as a chat function');
        }
      });
    }
  }
});
