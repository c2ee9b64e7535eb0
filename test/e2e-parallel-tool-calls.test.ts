/**
 * End-to-end: Gemini's parallel tool calls reach Messages and Responses clients as separate calls with parseable
 * arguments. Gemini's OpenAI-compatible stream sends each call whole in a chunk of its own, with its own id and no
 * `tool_calls[].index` (or index 0 on each); keyed by index alone, the second call's id and name were dropped and its
 * arguments appended to the first's (`{"file_path":"/a"}{"command":"ls"}`), which Claude Code and Codex cannot parse.
 * The provider is test/support/gemini-parallel-tools-stub.ts (config provider `gemini`, base URL
 * `<stub>/v1beta/openai`); admin on the real PostgreSQL and the proxy run as their own processes; the clients are
 * the official Anthropic SDK (`/v1/messages`) and the openai SDK's Responses (`/ai/responses`).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startStubbedStack, stubRequests, type StubbedStack } from './support/stack.ts';

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack('test/support/gemini-parallel-tools-stub.ts', (stub) => ({ providers: { gemini: { 'base-url': `${stub}/v1beta/openai` } } }));
});
after(async () => {
  await s?.stop();
});

const anthropic = () => new Anthropic({ baseURL: s.stack.gatewayUrl, apiKey: null, authToken: null, maxRetries: 0, defaultHeaders: { 'x-api-key': s.stack.apiKey } });
const openai = () => new OpenAI({ baseURL: `${s.stack.gatewayUrl}/ai`, apiKey: s.stack.apiKey, maxRetries: 0 });

const TOOL_SCHEMA = { type: 'object' as const, properties: { file_path: { type: 'string' }, command: { type: 'string' } } };
const EXPECTED = [
  ['jm4owj31', 'Read', { file_path: '/a' }],
  ['k2p9xq07', 'Bash', { command: 'ls' }],
];
/** The stub's models: `no-index` streams calls without `index`, `index-zero` with `index: 0` on each. */
const MODELS = ['no-index', 'index-zero'] as const;

describe("Gemini's parallel tool calls, to the Anthropic SDK (/v1/messages)", () => {
  const params = (model: string) => ({
    model: `gemini/${model}`,
    max_tokens: 200,
    tools: [{ name: 'Read', input_schema: TOOL_SCHEMA }, { name: 'Bash', input_schema: TOOL_SCHEMA }],
    messages: [{ role: 'user' as const, content: 'Read /a and list the directory.' }],
  });

  for (const model of MODELS) {
    test(`streamed, ${model}: two tool_use blocks, each with its own id, name and input`, async () => {
      const stream = anthropic().messages.stream(params(model));
      const stops: number[] = [];
      stream.on('streamEvent', (e) => void (e.type === 'content_block_stop' && stops.push(e.index)));
      const final = await stream.finalMessage();
      const uses = final.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
      assert.deepEqual(uses.map((b) => [b.id, b.name, b.input]), EXPECTED);
      assert.equal(final.stop_reason, 'tool_use');
      assert.deepEqual(stops, final.content.map((_, i) => i), 'each block stopped once, in order');
      assert.ok((await stubRequests(s.stubUrl)).some((r) => r.url === '/v1beta/openai/chat/completions' && r.body.stream === true));
    });
  }

  test('not streamed: two tool_use blocks', async () => {
    const message = await anthropic().messages.create(params('no-index'));
    const uses = message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
    assert.deepEqual(uses.map((b) => [b.id, b.name, b.input]), EXPECTED);
  });
});

describe("Gemini's parallel tool calls, to the openai SDK's Responses (/ai/responses)", () => {
  const params = (model: string) => ({
    model: `gemini/${model}`,
    input: 'Read /a and list the directory.',
    tools: [
      { type: 'function' as const, name: 'Read', parameters: TOOL_SCHEMA, strict: false },
      { type: 'function' as const, name: 'Bash', parameters: TOOL_SCHEMA, strict: false },
    ],
  });
  const calls = (output: OpenAI.Responses.ResponseOutputItem[]) =>
    output.filter((i): i is OpenAI.Responses.ResponseFunctionToolCall => i.type === 'function_call').map((i) => [i.call_id, i.name, JSON.parse(i.arguments)]);

  for (const model of MODELS) {
    test(`streamed, ${model}: two function_call items with parseable arguments`, async () => {
      const stream = openai().responses.stream(params(model));
      const done: OpenAI.Responses.ResponseOutputItem[] = [];
      stream.on('response.output_item.done', (e) => void done.push(e.item));
      const final = await stream.finalResponse();
      assert.deepEqual(calls(final.output), EXPECTED);
      assert.deepEqual(calls(done), EXPECTED, 'the items as each was done');
    });
  }

  test('not streamed: two function_call items', async () => {
    const response = await openai().responses.create(params('no-index'));
    assert.deepEqual(calls(response.output), EXPECTED);
  });
});
