/**
 * End-to-end: what becomes of a chat-completions request's members on their way to Anthropic's Messages API, driven
 * by the real clients against real processes (admin, the proxy, and test/support/structured-output-stub.ts playing
 * Anthropic, answering JSON that follows a request's `output_config.format` schema):
 *
 * - the `openai` SDK's `response_format` json_schema reaches Anthropic as `output_config.format`; the members
 *   Anthropic has no place for (`seed`, `tools[0].function.strict`, `messages[1].name`, …) are not sent and are
 *   named in `Svc-Removed-Members` and the log record's `svc-removed-members`; `max_completion_tokens` is clamped to
 *   the model's output limit;
 * - what the client relies on and Anthropic cannot give (`logprobs`, audio output, a temperature above 1) is a 400
 *   naming it, and nothing reaches the provider; the Responses API's temperature the same;
 * - the Vercel AI SDK's `generateText` with `Output.object` (non-streamed and streamed) through `openai.chat(…)` and
 *   LangChain's `withStructuredOutput` get their object;
 * - Messages → chat completions: the Anthropic SDK's five `stop_sequences` to an OpenAI model are a 400 in Anthropic's
 *   error shape naming `stop_sequences` (OpenAI takes at most four); four reach OpenAI (the stack's stub-upstream).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { useMembersStack } from './support/members-stack.ts';
import { clearStubRequests, fetchRecord, stubRequests } from './support/stack.ts';
import { clientRefusal, removedPaths } from './support/refusal.ts';

type Json = Record<string, any>;

const MODEL = 'anthropic/claude-sonnet-4-5';
const SCHEMA = { type: 'object', properties: { city: { type: 'string' }, population: { type: 'number' } }, required: ['city', 'population'], additionalProperties: false };
/** What the stub answers for {@link SCHEMA} and the zod schema below (test/support/structured-output-stub.ts). */
const PLACE = { city: 'city-value', population: 42 };
const place = z.object({ city: z.string(), population: z.number() });

const members = useMembersStack('test/support/structured-output-stub.ts', (stub, stackStub) => ({
  providers: { anthropic: { 'base-url': `${stub}/v1` }, openai: { 'base-url': `${stackStub}/v1` } },
}));
/** The requests that reached the Anthropic stub since they were last cleared. */
const { openai, sent: sentToAnthropic } = members;

describe('chat completions → Anthropic, with the openai SDK', () => {
  test('response_format json_schema reaches Anthropic as output_config.format; the other members recorded in the header and the log', async () => {
    await members.clear();
    const { data, response } = await openai()
      .chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'Answer in JSON.' },
          { role: 'user', name: 'alice', content: [{ type: 'text', text: 'Where?' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } }] },
        ],
        response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA, strict: true } },
        tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} }, strict: true } }],
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.1,
        logit_bias: { '50256': -100 },
        metadata: { tag: 'x' },
        reasoning_effort: 'low',
        store: true,
        service_tier: 'default',
        prediction: { type: 'content', content: 'x' },
        max_completion_tokens: 1_000_000,
        foo_unknown: 1,
      } as any)
      .withResponse();
    assert.deepEqual(JSON.parse(data.choices[0]!.message.content!), PLACE);
    const [sent] = await sentToAnthropic();
    assert.equal(sent!.url, '/v1/messages');
    assert.deepEqual(sent!.body.output_config, { format: { type: 'json_schema', schema: SCHEMA } });
    assert.equal(sent!.body.max_tokens, 64000);
    assert.deepEqual(Object.keys(sent!.body).sort(), ['max_tokens', 'messages', 'model', 'output_config', 'system', 'tools']);
    assert.deepEqual(sent!.body.tools, [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }]);
    const expected = [
      'messages[1].content[1].image_url.detail',
      'messages[1].name',
      'tools[0].function.strict',
      'seed',
      'presence_penalty',
      'frequency_penalty',
      'logit_bias',
      'reasoning_effort',
      'store',
      'service_tier',
      'prediction',
      'foo_unknown',
      'metadata.tag',
    ];
    assert.deepEqual(removedPaths(response.headers.get('svc-removed-members')), expected);
    const rec = await fetchRecord(members.stack, response.headers.get('svc-id')!);
    // The record's property is the list as JSON.
    assert.deepEqual(JSON.parse(rec.request_properties['svc-removed-members']), expected);
  });

  test('logprobs, audio output and a temperature above 1 are refused naming them; nothing reaches Anthropic', async () => {
    await members.clear();
    const base = { model: MODEL, messages: [{ role: 'user' as const, content: 'hi' }] };
    const logprobs = await clientRefusal(() => openai().chat.completions.create({ ...base, logprobs: true, top_logprobs: 2 }));
    assert.equal(logprobs.param, 'logprobs');
    const audio = await clientRefusal(() => openai().chat.completions.create({ ...base, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }));
    assert.match(String(audio.param), /^(modalities|audio)$/);
    const hot = await clientRefusal(() => openai().chat.completions.create({ ...base, temperature: 1.7 }));
    assert.equal(hot.param, 'temperature');
    assert.match(hot.message, /between 0 and 1/);
    const jsonMode = await clientRefusal(() => openai().chat.completions.create({ ...base, response_format: { type: 'json_object' } }));
    assert.equal(jsonMode.param, 'response_format.type');
    assert.deepEqual(await sentToAnthropic(), []);
  });

  test('the Responses API to Anthropic: a temperature above 1 is refused naming temperature', async () => {
    await members.clear();
    const err = await clientRefusal(() => openai().responses.create({ model: MODEL, input: 'hi', temperature: 1.5 }));
    assert.equal(err.param, 'temperature');
    assert.deepEqual(await sentToAnthropic(), []);
  });
});

describe('structured output clients through chat completions to Anthropic', () => {
  test('the AI SDK: generateText with Output.object via openai.chat gets its object', async () => {
    await members.clear();
    assert.deepEqual(await members.aiSdkObject(MODEL, place), PLACE);
    const [sent] = await sentToAnthropic();
    assert.equal(sent!.body.output_config.format.type, 'json_schema');
    assert.deepEqual(Object.keys(sent!.body.output_config.format.schema.properties), ['city', 'population']);
  });

  test('the AI SDK: streamText with Output.object gets its object from the stream', async () => {
    assert.deepEqual(await members.aiSdkStreamedObject(MODEL, place), PLACE);
  });

  test('LangChain: ChatOpenAI withStructuredOutput (its json_schema method) gets its object', async () => {
    await members.clear();
    assert.deepEqual(await members.langChainObject(MODEL, place, 'place'), PLACE);
    const [sent] = await sentToAnthropic();
    assert.equal(sent!.body.output_config.format.type, 'json_schema');
  });
});

describe('Messages → chat completions, with the Anthropic SDK', () => {
  const anthropic = () => new Anthropic({ baseURL: members.stack.gatewayUrl, apiKey: members.stack.apiKey, maxRetries: 0 });
  const stackStub = async (): Promise<Json[]> => (await stubRequests(members.stack.stubUrl)).filter((r) => r.url === '/v1/chat/completions');

  test('five stop_sequences to an OpenAI model: a 400 in Anthropic\'s shape naming stop_sequences; four reach OpenAI as stop', async () => {
    await clearStubRequests(members.stack.stubUrl);
    const body = { model: 'openai/gpt-4o-mini', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] };
    let error: Json | undefined;
    try {
      await anthropic().messages.create({ ...body, stop_sequences: ['a', 'b', 'c', 'd', 'e'] });
    } catch (err) {
      error = err as Json;
    }
    assert.equal(error?.status, 400);
    assert.equal(error?.error?.type, 'error');
    assert.equal(error?.error?.error?.type, 'invalid_request_error');
    assert.match(error?.error?.error?.message, /^stop_sequences: at most 4 when translated to chat completions/);
    assert.deepEqual(await stackStub(), []);
    await anthropic().messages.create({ ...body, stop_sequences: ['a', 'b', 'c', 'd'] });
    const sent = await stackStub();
    assert.equal(sent.length, 1);
    assert.deepEqual(sent[0]!.body.stop, ['a', 'b', 'c', 'd']);
  });
});
