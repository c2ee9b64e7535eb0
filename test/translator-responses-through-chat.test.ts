/**
 * The Responses translators that go through chat completions: `openai-responses` → `anthropic-messages` and →
 * `bedrock-converse`. The Codex request and Responses bodies translated to Messages and Converse bodies (the members
 * settled by each route: effort removed, structured output to `output_config.format`, what Converse lacks removed or
 * refused), recorded Anthropic and Bedrock answers and streams mapped to Responses objects and events (split at every
 * byte and at random), namespaced tool calls named back, Anthropic's in-stream error as `response.failed`, and the
 * chained stream emitting as its input arrives.
 */
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { GatewayError } from '../proxy/errors.ts';
import { translatorFor } from '../proxy/translators/index.ts';
import { openAIResponsesToAnthropicMessages } from '../proxy/translators/openai-responses-to-anthropic-messages.ts';
import { openAIResponsesToBedrockConverse } from '../proxy/translators/openai-responses-to-bedrock-converse.ts';
import type { MappingTranslator, TranslatorCall } from '../proxy/translators/types.ts';
import { events, fold, run, split, SPLITS } from './support/responses-stream.ts';
import { refusal } from './support/refusal.ts';

const FIXTURES = new URL('./fixtures/', import.meta.url);
const bytes = (path: string): Buffer => readFileSync(new URL(path, FIXTURES));
const json = (path: string): any => JSON.parse(bytes(path).toString('utf8'));
const REQUEST_ID = '00000000-0000-4000-8000-000000000001';
const HEX = '00000000000040008000000000000001';
const CODEX = json('clients/codex-0.169.0.request.json');

function call(body: Record<string, unknown>, provider?: string): TranslatorCall {
  return { body: body as unknown as ChatCompletionRequest, stream: body.stream === true, requestId: REQUEST_ID, removed: [], ...(provider ? { provider } : {}) };
}

function wire(translator: MappingTranslator, c: TranslatorCall): any {
  return JSON.parse(translator.translateRequest(c).toString('utf8'));
}


describe('openai-responses → anthropic-messages', () => {
  it('is registered for its pair, going through chat completions', () => {
    assert.equal(translatorFor('openai-responses', 'anthropic-messages'), openAIResponsesToAnthropicMessages);
    assert.equal(translatorFor('openai-responses', 'bedrock-converse'), openAIResponsesToBedrockConverse);
  });

  it('the Codex request: developer items as the system prompt, flattened tools, the web search removed and recorded, max_tokens from the model table', () => {
    const c = call({ ...CODEX, model: 'claude-sonnet-4-5', reasoning: { effort: 'medium', summary: 'auto' } }, 'anthropic');
    const body = wire(openAIResponsesToAnthropicMessages, c);
    const texts = (item: any): string => item.content.map((part: any) => part.text).join('\n\n');
    assert.equal(body.system, `${texts(CODEX.input[0])}\n\n${texts(CODEX.input[1])}`);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: texts(CODEX.input[2]) }, { type: 'text', text: 'What is 2+2?' }] }]);
    assert.equal(body.tools.length, 12);
    assert.ok(body.tools.some((t: any) => t.name === 'multi_agent_v1__spawn_agent' && t.input_schema.type === 'object'));
    assert.deepEqual(body.tool_choice, { type: 'auto' });
    assert.equal(body.max_tokens, 64000);
    assert.equal(body.stream, true);
    assert.equal(body.thinking, undefined);
    assert.deepEqual(c.removed, ['tools[8]', 'reasoning.summary', 'store', 'include', 'prompt_cache_key', 'client_metadata', 'reasoning.effort']);
    assert.equal(c.toolNames!.get('multi_agent_v1__spawn_agent')!.namespace, 'multi_agent_v1');
  });

  it('structured output → output_config.format; json_object refused; max_output_tokens clamped to the model\'s limit', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const body = wire(openAIResponsesToAnthropicMessages, call({ model: 'claude-haiku-4-5', input: 'x', max_output_tokens: 1_000_000, text: { format: { type: 'json_schema', name: 'out', schema, strict: true } } }, 'anthropic'));
    assert.deepEqual(body.output_config, { format: { type: 'json_schema', schema } });
    assert.equal(body.max_tokens, 64000);
    assert.equal(refusal(() => openAIResponsesToAnthropicMessages.translateRequest(call({ model: 'claude-haiku-4-5', input: 'x', text: { format: { type: 'json_object' } } }, 'anthropic'))).param, 'text.format.type');
    assert.equal(refusal(() => openAIResponsesToAnthropicMessages.translateRequest(call({ model: 'claude-haiku-4-5', input: 'x', background: true }, 'anthropic'))).param, 'background');
  });

  it('a multi-turn function call and its output become tool_use and tool_result blocks, with the namespaced name', () => {
    const body = wire(
      openAIResponsesToAnthropicMessages,
      call({
        model: 'claude-haiku-4-5',
        tools: CODEX.tools,
        input: [
          { role: 'user', content: 'spawn' },
          { type: 'function_call', call_id: 'call_1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"message":"hi"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'agent-1' },
        ],
      }),
    );
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'spawn' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'multi_agent_v1__spawn_agent', input: { message: 'hi' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'agent-1' }] },
    ]);
  });

  it('a message: text and four tool calls as Responses items; cache reads as cached tokens, cache writes beside them', () => {
    const m = json('providers/anthropic/message-tool-use.json');
    const { status, body } = openAIResponsesToAnthropicMessages.translateResponse(bytes('providers/anthropic/message-tool-use.json'), call({ model: 'claude-haiku-4-5', input: 'x' }));
    assert.equal(status, 200);
    const response = body as any;
    assert.equal(response.id, `resp_${HEX}`);
    assert.equal(response.model, 'claude-haiku-4-5-20251001');
    assert.deepEqual(response.output[0], { id: `msg_${HEX}_0`, type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: m.content[0].text }], role: 'assistant' });
    assert.deepEqual(
      response.output.slice(1).map((i: any) => [i.type, i.call_id, i.name, JSON.parse(i.arguments).name]),
      m.content.slice(1).map((b: any) => ['function_call', b.id, b.name, b.input.name]),
    );
    assert.deepEqual(response.usage, { input_tokens: 423, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 }, output_tokens: 202, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 625 });
    const cached = openAIResponsesToAnthropicMessages.translateResponse(bytes('providers/anthropic/message.json'), call({ model: 'claude-sonnet-4-5', input: 'x' })).body as any;
    const recorded = json('providers/anthropic/message.json').usage;
    assert.deepEqual(cached.usage.input_tokens_details, { cached_tokens: recorded.cache_read_input_tokens, cache_write_tokens: recorded.cache_creation_input_tokens });
    const bad = openAIResponsesToAnthropicMessages.translateResponse(Buffer.from('{"type":"nope"}'), call({ model: 'm', input: 'x' }));
    assert.equal(bad.status, 502);
    assert.equal((bad.body as any).error.code, 'upstream_bad_response');
  });

  it('a tool_use of a flattened name is answered with the namespace', () => {
    const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [{ type: 'tool_use', id: 'toolu_1', name: 'multi_agent_v1__wait_agent', input: { targets: ['a'] } }], stop_reason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 } };
    const response = openAIResponsesToAnthropicMessages.translateResponse(Buffer.from(JSON.stringify(message)), call({ ...CODEX, model: 'claude-haiku-4-5' })).body as any;
    assert.deepEqual(response.output, [{ id: `fc_${HEX}_0`, type: 'function_call', status: 'completed', arguments: '{"targets":["a"]}', call_id: 'toolu_1', name: 'wait_agent', namespace: 'multi_agent_v1' }]);
  });

  it('a non-streamed message keeps Anthropic\'s block order as separate items, as the stream does', async () => {
    const blocks = [
      { type: 'text', text: 'first' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'text', text: 'second' },
      { type: 'thinking', thinking: 'hmm', signature: 'c2ln' },
      { type: 'text', text: 'third' },
    ];
    const message = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: blocks, stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } };
    const request = { model: 'claude-haiku-4-5', input: 'x', tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }] };
    const response = openAIResponsesToAnthropicMessages.translateResponse(Buffer.from(JSON.stringify(message)), call(request, 'anthropic')).body as any;
    const sse = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    const delta = (b: any) => (b.type === 'text' ? { type: 'text_delta', text: b.text } : b.type === 'thinking' ? { type: 'thinking_delta', thinking: b.thinking } : { type: 'input_json_delta', partial_json: JSON.stringify(b.input) });
    const empty = (b: any) => (b.type === 'text' ? { type: 'text', text: '' } : b.type === 'thinking' ? { type: 'thinking', thinking: '', signature: '' } : { ...b, input: {} });
    const stream = [
      sse('message_start', { message: { ...message, content: [], stop_reason: null } }),
      ...blocks.flatMap((b, index) => [sse('content_block_start', { index, content_block: empty(b) }), sse('content_block_delta', { index, delta: delta(b) }), sse('content_block_stop', { index })]),
      sse('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } }),
      sse('message_stop', {}),
    ].join('');
    const { final } = fold(events(await run(openAIResponsesToAnthropicMessages.createStreamTranslator!(call({ ...request, stream: true }, 'anthropic')), [Buffer.from(stream)])));
    const shape = (item: any) => [item.id, item.type, item.type === 'message' ? item.content[0].text : item.type === 'reasoning' ? item.summary[0].text : item.arguments];
    assert.deepEqual(response.output.map(shape), [
      [`msg_${HEX}_0`, 'message', 'first'],
      [`fc_${HEX}_1`, 'function_call', '{"city":"Paris"}'],
      [`msg_${HEX}_2`, 'message', 'second'],
      [`rs_${HEX}_3`, 'reasoning', 'hmm'],
      [`msg_${HEX}_4`, 'message', 'third'],
    ]);
    assert.deepEqual(response.output.map(shape), final.response.output.map(shape), 'the JSON answer and the stream agree');
  });

  describe('Anthropic streams → Responses events', () => {
    const eachSplit = (path: string, check: (list: ReturnType<typeof events>) => void) => {
      for (const how of SPLITS) {
        it(`${path} split ${JSON.stringify(how)}`, async () => {
          const out = await run(openAIResponsesToAnthropicMessages.createStreamTranslator!(call({ model: 'claude', input: 'x', stream: true }, 'anthropic')), split(bytes(`providers/anthropic/${path}`), how));
          check(events(out));
        });
      }
    };

    eachSplit('message-stream-recorded.sse', (list) => {
      const { final } = fold(list);
      assert.equal(final.type, 'response.completed');
      assert.deepEqual(final.response.output.map((i: any) => i.type), ['message']);
      const deltas = (bytes('providers/anthropic/message-stream-recorded.sse').toString('utf8').match(/"text_delta"/g) ?? []).length;
      assert.equal(list.filter((e) => e.type === 'response.output_text.delta').length, deltas, 'one text delta per Anthropic text_delta');
      assert.equal(final.response.output[0].content[0].text, '2');
      assert.ok(final.response.usage.output_tokens > 0);
    });

    eachSplit('message-stream-tool-use-recorded.sse', (list) => {
      const { final } = fold(list);
      assert.deepEqual(final.response.output.map((i: any) => i.type), ['message', 'function_call', 'function_call']);
      for (const item of final.response.output.slice(1)) assert.doesNotThrow(() => JSON.parse(item.arguments));
    });

    eachSplit('message-stream-thinking.sse', (list) => {
      const { final } = fold(list);
      assert.deepEqual(final.response.output.map((i: any) => i.type), ['reasoning', 'message']);
      assert.ok(final.response.output[0].summary[0].text.length > 0, 'the thinking text is the summary');
    });

    eachSplit('error-stream-event.sse', (list) => {
      const { final } = fold(list);
      assert.equal(final.type, 'response.failed');
      assert.equal(final.response.error.message, 'Overloaded');
    });
  });
});

describe('errors of the chat → wire step name the Responses members', () => {
  const input = [
    { type: 'message', role: 'developer', content: 'Be brief.' },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Read this.' }, { type: 'input_file', filename: 'a.txt', file_data: 'data:text/plain;base64,aGk=' }] },
    { type: 'function_call', call_id: 'c1', name: 'ls', arguments: '{}' },
    { type: 'function_call', call_id: 'c2', name: 'cat', arguments: '{"path": ' },
    { type: 'function_call_output', call_id: 'c1', output: 'a.txt' },
  ];
  const tools = [{ type: 'function', name: 'ls', parameters: { type: 'object' } }, { type: 'function', name: 'cat', parameters: { type: 'object' } }];

  it('a file part Anthropic cannot read: input[1].content[1].file_data, not messages[0]', () => {
    const err = refusal(() => openAIResponsesToAnthropicMessages.translateRequest(call({ model: 'claude-haiku-4-5', input: input.slice(0, 2), tools }, 'anthropic')));
    assert.equal(err.param, 'input[1].content[1].file_data');
    assert.match(err.message, /^input\[1\]\.content\[1\]: anthropic accepts files only as PDF/);
    assert.doesNotMatch(err.message, /messages\[/);
  });

  it("the second of two merged function calls: its own item's arguments", () => {
    const body = { model: 'claude-haiku-4-5', input: [input[0], { ...input[1], content: 'Read this.' }, ...input.slice(2)], tools };
    const err = refusal(() => openAIResponsesToAnthropicMessages.translateRequest(call(body, 'anthropic')));
    assert.equal(err.param, 'input[3].arguments');
    assert.equal(err.message, 'input[3].arguments is not valid JSON');
  });

  it('an image URL Bedrock cannot fetch: input[0].content[0].image_url', () => {
    const body = { model: 'anthropic.claude-3-haiku', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/cat.png' }] }] };
    const err = refusal(() => openAIResponsesToBedrockConverse.translateRequest(call(body, 'bedrock')));
    assert.equal(err.param, 'input[0].content[0].image_url');
    assert.doesNotMatch(err.message, /messages\[/);
  });
});

describe('openai-responses → bedrock-converse', () => {
  it('effort, user and parallel_tool_calls removed and recorded; structured output refused', () => {
    const c = call({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', input: 'x', reasoning: { effort: 'high' }, safety_identifier: 'u1', parallel_tool_calls: false, tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] }, 'bedrock');
    const body = wire(openAIResponsesToBedrockConverse, c);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ text: 'x' }] }]);
    assert.deepEqual(body.toolConfig.tools[0].toolSpec.name, 'f');
    assert.deepEqual(c.removed, ['reasoning.effort', 'safety_identifier', 'parallel_tool_calls']);
    assert.equal(refusal(() => openAIResponsesToBedrockConverse.translateRequest(call({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } }, 'bedrock'))).param, 'text.format.type');
  });

  it('a Converse answer as a Responses object; the event stream as Responses events', async () => {
    const response = openAIResponsesToBedrockConverse.translateResponse(bytes('providers/bedrock/converse.json'), call({ model: 'us.amazon.nova-micro-v1:0', input: 'x' })).body as any;
    assert.equal(response.output[0].content[0].text, json('providers/bedrock/converse.json').output.message.content[0].text);
    assert.equal(response.usage.total_tokens, 37);
    for (const how of [1, { seed: 3 }] as const) {
      const out = await run(openAIResponsesToBedrockConverse.createStreamTranslator!(call({ model: 'nova', input: 'x', stream: true }, 'bedrock')), split(bytes('providers/bedrock/converse-stream-tool-use.eventstream'), how));
      const { final } = fold(events(out));
      assert.equal(final.type, 'response.completed');
      assert.deepEqual(final.response.output.map((i: any) => i.type), ['message', 'function_call']);
    }
  });
});

describe('the chained stream', () => {
  it("emits each input piece's events as soon as it arrives", async () => {
    const mapper = openAIResponsesToAnthropicMessages.createStreamTranslator!(call({ model: 'claude', input: 'x', stream: true }, 'anthropic'));
    const seen: string[] = [];
    mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const sse = (type: string, data: unknown) => Buffer.from(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
    mapper.write(sse('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], usage: { input_tokens: 3, output_tokens: 1 } } }));
    mapper.write(sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
    mapper.write(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hel' } }));
    await tick();
    assert.match(seen.join(''), /"delta":"Hel"/);
    assert.doesNotMatch(seen.join(''), /response\.completed/);
    mapper.write(sse('content_block_stop', { type: 'content_block_stop', index: 0 }));
    mapper.write(sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }));
    mapper.end(sse('message_stop', { type: 'message_stop' }));
    await new Promise((resolve) => mapper.on('end', resolve));
    const { final } = fold(events(seen.join('')));
    assert.equal(final.response.output[0].content[0].text, 'Hel');
    assert.equal(final.response.usage.input_tokens, 3);
  });
});
