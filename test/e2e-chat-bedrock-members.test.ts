/**
 * End-to-end: what becomes of a chat-completions request's members on their way to Bedrock's Converse API, driven by
 * the real clients against real processes (admin, the proxy signing with the test AWS key, and
 * test/support/bedrock-stub.ts playing Bedrock, answering JSON that follows a request's
 * `outputConfig.textFormat` schema):
 *
 * - the tester's request through the `openai` SDK: `response_format` json_schema reaches Converse as
 *   `outputConfig.textFormat`, `service_tier: "flex"` as `serviceTier`; the members Converse has no place for (`seed`,
 *   `messages[0].name`, `user`, `reasoning_effort`, `metadata.a`, …) are not sent and are named in
 *   `Svc-Removed-Members` and the log record's `svc-removed-members`;
 * - what the client relies on and Converse cannot give (`logprobs`, `json_object`, a temperature above 1, `n` > 1) is
 *   a 400 naming it, and nothing reaches Bedrock;
 * - the Vercel AI SDK's `generateText` and `streamText` with `Output.object` through `openai.chat(…)`, LangChain's
 *   `withStructuredOutput`, and a streamed `openai` SDK call get their object from Bedrock;
 * - the Responses API's `text.format` json_schema reaches Converse the same way; `json_object` is a 400 naming
 *   `text.format.type`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { useBedrockMembersStack } from './support/members-stack.ts';
import { fetchRecord } from './support/stack.ts';
import { clientRefusal, removedPaths } from './support/refusal.ts';

type Json = Record<string, any>;

const MODEL = 'bedrock/us.amazon.nova-micro-v1:0';
const SCHEMA = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
/** What the stub answers for {@link SCHEMA} (test/support/schema-example.ts). */
const ANSWER = { a: 'a-value' };
const place = z.object({ city: z.string(), population: z.number() });
const PLACE = { city: 'city-value', population: 42 };

const bedrock = useBedrockMembersStack();
const { openai, sent: sentToBedrock } = bedrock;

describe('chat completions → Bedrock Converse, with the openai SDK', () => {
  test('the tester\'s request: json_schema → outputConfig.textFormat, flex → serviceTier, the other members recorded in the header and the log', async () => {
    await bedrock.clear();
    const { data, response } = await openai()
      .chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'give me json', name: 'bob' }],
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: SCHEMA } },
        seed: 1,
        frequency_penalty: 0.5,
        logprobs: false,
        top_logprobs: 3,
        user: 'u',
        reasoning_effort: 'high',
        logit_bias: { '1': 5 },
        metadata: { a: 'b' },
        store: true,
        service_tier: 'flex',
      })
      .withResponse();
    assert.deepEqual(JSON.parse(data.choices[0]!.message.content!), ANSWER);
    const [sent] = await sentToBedrock();
    assert.match(decodeURIComponent(sent!.url), /^\/model\/us\.amazon\.nova-micro-v1:0\/converse$/);
    assert.match(sent!.headers.authorization, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    assert.deepEqual(sent!.body, {
      messages: [{ role: 'user', content: [{ text: 'give me json' }] }],
      outputConfig: { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'x' } } } },
      serviceTier: { type: 'flex' },
    });
    const expected = ['messages[0].name', 'seed', 'frequency_penalty', 'top_logprobs', 'user', 'reasoning_effort', 'logit_bias', 'metadata.a', 'store'];
    assert.deepEqual(removedPaths(response.headers.get('svc-removed-members')), expected);
    const rec = await fetchRecord(bedrock.stack, response.headers.get('svc-id')!);
    assert.deepEqual(JSON.parse(rec.request_properties['svc-removed-members']), expected);
  });

  test('logprobs, json_object, a temperature above 1 and n > 1 are refused naming them; nothing reaches Bedrock', async () => {
    await bedrock.clear();
    const base = { model: MODEL, messages: [{ role: 'user' as const, content: 'hi' }] };
    assert.equal((await clientRefusal(() => openai().chat.completions.create({ ...base, logprobs: true, top_logprobs: 3 }))).param, 'logprobs');
    assert.equal((await clientRefusal(() => openai().chat.completions.create({ ...base, response_format: { type: 'json_object' } }))).param, 'response_format.type');
    const hot = await clientRefusal(() => openai().chat.completions.create({ ...base, temperature: 1.7 }));
    assert.equal(hot.param, 'temperature');
    assert.match(hot.message, /between 0 and 1/);
    assert.equal((await clientRefusal(() => openai().chat.completions.create({ ...base, n: 2 }))).param, 'n');
    assert.deepEqual(await sentToBedrock(), []);
  });

  test('a streamed json_schema answer arrives whole over ConverseStream', async () => {
    await bedrock.clear();
    const stream = await openai().chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'give me json' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: SCHEMA, strict: true } },
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: Json | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.deepEqual(JSON.parse(text), ANSWER);
    assert.equal(usage?.total_tokens, 37);
    const [sent] = await sentToBedrock();
    assert.match(sent!.url, /\/converse-stream$/);
    assert.equal(sent!.body.outputConfig.textFormat.structure.jsonSchema.name, 'x');
  });
});

describe('structured output clients through chat completions to Bedrock', () => {
  test('the AI SDK: generateText with Output.object via openai.chat gets its object', async () => {
    await bedrock.clear();
    assert.deepEqual(await bedrock.aiSdkObject(MODEL, place), PLACE);
    const [sent] = await sentToBedrock();
    assert.deepEqual(Object.keys(JSON.parse(sent!.body.outputConfig.textFormat.structure.jsonSchema.schema).properties), ['city', 'population']);
  });

  test('the AI SDK: streamText with Output.object gets its object from the stream', async () => {
    assert.deepEqual(await bedrock.aiSdkStreamedObject(MODEL, place), PLACE);
  });

  test('LangChain: ChatOpenAI withStructuredOutput (its json_schema method) gets its object', async () => {
    await bedrock.clear();
    assert.deepEqual(await bedrock.langChainObject(MODEL, place, 'place'), PLACE);
    const [sent] = await sentToBedrock();
    assert.equal(sent!.body.outputConfig.textFormat.structure.jsonSchema.name, 'place');
  });
});

describe('the Responses API to Bedrock', () => {
  test('text.format json_schema reaches outputConfig.textFormat; json_object is refused naming text.format.type', async () => {
    await bedrock.clear();
    const data = await openai().responses.create({ model: MODEL, input: 'give me json', text: { format: { type: 'json_schema', name: 'x', schema: SCHEMA, strict: true } } });
    assert.deepEqual(JSON.parse(data.output_text), ANSWER);
    const [sent] = await sentToBedrock();
    assert.deepEqual(sent!.body.outputConfig, { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'x' } } } });
    await bedrock.clear();
    const err = await clientRefusal(() => openai().responses.create({ model: MODEL, input: 'hi', text: { format: { type: 'json_object' } } }));
    assert.equal(err.param, 'text.format.type');
    assert.deepEqual(await sentToBedrock(), []);
  });
});
