/**
 * The chat completions → Bedrock Converse request translation member by member
 * (proxy/translators/openai-chat-to-bedrock-converse/): every member of OpenAI's request has a decision (checked at
 * compile time against the `openai` SDK's request type), and is mapped, recorded in `call.removed`, or refused with a
 * 400 naming it; `response_format` json_schema reaches Converse's structured output, `json_object` and `logprobs` are
 * refused; `maxTokens` clamped to the model table's output limit; a temperature above Converse's 1 refused. And the
 * same rules on the Responses → Converse route, which goes through this translator, named as the Responses client
 * sent them.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ChatCompletionCreateParamsBase } from 'openai/resources/chat/completions';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { openAIChatToBedrockConverse, toConverseRequest } from '../proxy/translators/openai-chat-to-bedrock-converse.ts';
import { CONVERSE_MEMBERS } from '../proxy/translators/openai-chat-to-bedrock-converse/request.ts';
import { openAIResponsesToBedrockConverse } from '../proxy/translators/openai-responses-to-bedrock-converse.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { OPENAI_ONLY_REFUSALS, type RefusedRow } from './support/openai-only-refusals.ts';
import { refusal } from './support/refusal.ts';

const REQUEST_ID = '00000000-0000-4000-8000-000000000001';
const SCHEMA = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function call(body: Record<string, unknown>): TranslatorCall {
  return { body: body as unknown as ChatCompletionRequest, stream: body.stream === true, requestId: REQUEST_ID, removed: [], provider: 'bedrock' };
}

/** The Converse body sent for `c` (parsed), with `c.removed` filled. */
function wire(c: TranslatorCall, translator = openAIChatToBedrockConverse): any {
  return JSON.parse(translator.translateRequest(c).toString('utf8'));
}

const base = (extra: Record<string, unknown> = {}) => ({ model: 'us.amazon.nova-micro-v1:0', messages: [{ role: 'user', content: 'hi' }], ...extra });
const fn = (name: string, extra: Record<string, unknown> = {}) => ({ type: 'function', function: { name, parameters: SCHEMA, ...extra } });

/**
 * Every member of the `openai` SDK's chat-completions request, each with the decision the table holds for it. A
 * member the SDK adds fails the type check here (the Record misses it) until it is decided on in CONVERSE_MEMBERS.
 */
const OPENAI_MEMBERS: Record<keyof ChatCompletionCreateParamsBase, 'mapped' | 'honoured' | 'recorded' | 'refused'> = {
  messages: 'mapped',
  model: 'honoured',
  audio: 'refused',
  frequency_penalty: 'recorded',
  function_call: 'refused',
  functions: 'refused',
  logit_bias: 'recorded',
  logprobs: 'refused',
  max_completion_tokens: 'mapped',
  max_tokens: 'mapped',
  metadata: 'recorded',
  modalities: 'refused',
  moderation: 'refused',
  n: 'refused',
  parallel_tool_calls: 'recorded',
  prediction: 'recorded',
  presence_penalty: 'recorded',
  prompt_cache_key: 'recorded',
  prompt_cache_options: 'recorded',
  prompt_cache_retention: 'recorded',
  reasoning_effort: 'recorded',
  response_format: 'mapped',
  safety_identifier: 'recorded',
  seed: 'recorded',
  service_tier: 'mapped',
  stop: 'mapped',
  store: 'recorded',
  stream: 'honoured',
  stream_options: 'honoured',
  temperature: 'mapped',
  tool_choice: 'mapped',
  tools: 'mapped',
  top_logprobs: 'recorded',
  top_p: 'mapped',
  user: 'recorded',
  verbosity: 'recorded',
  web_search_options: 'refused',
};

describe('chat → Converse: top-level members', () => {
  it('every member of OpenAI\'s request has its decision in the table', () => {
    for (const member of Object.keys(OPENAI_MEMBERS)) assert.ok(CONVERSE_MEMBERS.has(member), `${member} is decided on`);
  });

  it('the tester\'s request: json_schema → outputConfig.textFormat, flex → serviceTier, the other members recorded, logprobs refused', () => {
    const body = base({
      messages: [{ role: 'user', content: 'give me json', name: 'bob' }],
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: SCHEMA } },
      seed: 1,
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      logprobs: true,
      top_logprobs: 3,
      user: 'u',
      reasoning_effort: 'high',
      parallel_tool_calls: false,
      logit_bias: { '1': 5 },
      metadata: { a: 'b' },
      store: true,
      service_tier: 'flex',
    });
    assert.equal(refusal(() => wire(call(body))).param, 'logprobs');
    const c = call({ ...body, logprobs: false });
    assert.deepEqual(wire(c), {
      messages: [{ role: 'user', content: [{ text: 'give me json' }] }],
      outputConfig: { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'x' } } } },
      serviceTier: { type: 'flex' },
    });
    // parallel_tool_calls without tools carries nothing: there is no tool to call in parallel.
    assert.deepEqual(c.removed, ['messages[0].name', 'seed', 'frequency_penalty', 'presence_penalty', 'top_logprobs', 'user', 'reasoning_effort', 'logit_bias', 'metadata.a', 'store']);
  });

  it('inference parameters: maxTokens (max_completion_tokens wins, a different max_tokens recorded, clamped to the model table\'s limit; as sent for a model it does not know), temperature, topP, stopSequences', () => {
    const c = call(base({ max_tokens: 10, max_completion_tokens: 20, temperature: 0.5, top_p: 0.9, stop: ['###', ''] }));
    assert.deepEqual(wire(c).inferenceConfig, { maxTokens: 20, temperature: 0.5, topP: 0.9, stopSequences: ['###'] });
    assert.deepEqual(c.removed, ['max_tokens']);
    assert.equal(wire(call(base({ max_tokens: 1_000_000 }))).inferenceConfig.maxTokens, 10000);
    assert.equal(wire(call({ ...base({ max_tokens: 1_000_000 }), model: 'amazon.nova-from-the-future' })).inferenceConfig.maxTokens, 1_000_000);
    assert.equal(wire(call(base({ stop: '' }))).inferenceConfig, undefined);
  });

  it('honoured as they are, not recorded: n 1, logprobs false, modalities text, store false, stream_options, response_format text, service_tier auto, null and empty members', () => {
    const c = call(base({ n: 1, logprobs: false, modalities: ['text'], store: false, stream: true, stream_options: { include_usage: true }, response_format: { type: 'text' }, service_tier: 'auto', seed: null, metadata: {}, tools: [], logit_bias: {} }));
    assert.deepEqual(wire(c), { messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    assert.deepEqual(c.removed, []);
  });

  it('service_tier: default and priority are Bedrock\'s tiers; scale recorded', () => {
    assert.deepEqual(wire(call(base({ service_tier: 'priority' }))).serviceTier, { type: 'priority' });
    assert.deepEqual(wire(call(base({ service_tier: 'default' }))).serviceTier, { type: 'default' });
    const c = call(base({ service_tier: 'scale' }));
    assert.equal(wire(c).serviceTier, undefined);
    assert.deepEqual(c.removed, ['service_tier']);
  });

  it('json_schema: name and description carried, strict honoured (not recorded), unknown members recorded', () => {
    const c = call(base({ response_format: { type: 'json_schema', json_schema: { name: 'p', schema: SCHEMA, strict: false, description: 'A place', x: 1 } } }));
    assert.deepEqual(wire(c).outputConfig, { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'p', description: 'A place' } } } });
    assert.deepEqual(c.removed, ['response_format.json_schema.x']);
  });

  it('vendor extras and members named like Object.prototype\'s are recorded, not swallowed', () => {
    const c = call(base({ top_k: 5, ...JSON.parse('{"constructor": 1, "toString": "x", "__proto__": {"a": 1}}') }));
    wire(c);
    assert.deepEqual(c.removed, ['top_k', 'constructor', 'toString', '__proto__']);
  });

  const refused: RefusedRow[] = [
    ...OPENAI_ONLY_REFUSALS,
    ['moderation', { moderation: { model: 'omni-moderation-latest' } }, 'moderation'],
    ['response_format json_object (no JSON mode)', { response_format: { type: 'json_object' } }, 'response_format.type'],
    ['an unknown response_format type', { response_format: { type: 'xml' } }, 'response_format.type'],
    ['a json_schema without a schema object', { response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format.json_schema.schema'],
    ['temperature above 1 (OpenAI\'s range is 0 to 2)', { temperature: 1.7 }, 'temperature'],
    ['temperature not a number', { temperature: '0.5' }, 'temperature'],
    ['max_completion_tokens not a positive integer', { max_completion_tokens: 0 }, 'max_completion_tokens'],
    ['stop not strings', { stop: [1] }, 'stop'],
    ['metadata not an object', { metadata: 'x' }, 'metadata'],
    ['service_tier not a string', { service_tier: 1 }, 'service_tier'],
    ['an unknown tool_choice', { tool_choice: 'sometimes' }, 'tool_choice'],
  ];
  for (const [name, extra, param] of refused) {
    it(`refuses ${name}, naming ${param}`, () => {
      const err = refusal(() => wire(call(base(extra))));
      assert.equal(err.param, param);
      assert.ok(err.message.includes(param.split('.')[0]!), `the message names ${param}: ${err.message}`);
    });
  }

  it('the temperature refusal says Converse\'s range; 0 and 1 pass as they are', () => {
    assert.match(refusal(() => toConverseRequest(base({ temperature: 1.7 }) as ChatCompletionRequest)).message, /between 0 and 1 for bedrock.*got 1\.7/);
    assert.equal(toConverseRequest(base({ temperature: 1 }) as ChatCompletionRequest).inferenceConfig?.temperature, 1);
    assert.equal(toConverseRequest(base({ temperature: 0 }) as ChatCompletionRequest).inferenceConfig?.temperature, 0);
  });
});

describe('chat → Converse: tools', () => {
  it('strict true and unknown members recorded, cache_control a cachePoint after the tool; strict false honoured; parallel_tool_calls false recorded', () => {
    const c = call(base({ tools: [fn('a', { strict: true }), { ...fn('b', { strict: false, examples: [1] }), cache_control: { type: 'ephemeral' } }], parallel_tool_calls: false, seed: 1 }));
    assert.deepEqual(wire(c).toolConfig, {
      tools: [{ toolSpec: { name: 'a', inputSchema: { json: SCHEMA } } }, { toolSpec: { name: 'b', inputSchema: { json: SCHEMA } } }, { cachePoint: { type: 'default' } }],
    });
    assert.deepEqual(c.removed, ['tools[0].function.strict', 'tools[1].function.examples', 'parallel_tool_calls', 'seed']);
  });

  it('tool_choice none: no toolConfig (nothing recorded), unless the history holds tool blocks (then tool_choice recorded); required without tools recorded', () => {
    const none = call(base({ tools: [fn('a', { strict: true })], tool_choice: 'none' }));
    assert.equal(wire(none).toolConfig, undefined);
    assert.deepEqual(none.removed, []);
    const history = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'a', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'done' },
    ];
    const kept = call(base({ messages: history, tools: [fn('a')], tool_choice: 'none' }));
    assert.deepEqual(wire(kept).toolConfig, { tools: [{ toolSpec: { name: 'a', inputSchema: { json: SCHEMA } } }] });
    assert.deepEqual(kept.removed, ['tool_choice']);
    const orphan = call(base({ tool_choice: 'required' }));
    assert.equal(wire(orphan).toolConfig, undefined);
    assert.deepEqual(orphan.removed, ['tool_choice']);
    assert.deepEqual(call(base({ tool_choice: 'auto' })).removed, []);
  });
});

describe('chat → Converse: messages', () => {
  it('a name, an image detail, a refusal, a system image, unknown part and call members recorded; a filename becomes the document name; detail auto honoured', () => {
    const c = call(
      base({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }], name: 'sys' },
          { role: 'user', name: 'alice', content: [{ type: 'image_url', image_url: { url: PNG, detail: 'high' } }, { type: 'image_url', image_url: { url: PNG, detail: 'auto' } }] },
          { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'refusal', refusal: 'no' }], refusal: 'no', annotations: [] },
          { role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'report.pdf' } }, { type: 'text', text: 'read', x: 1 }] },
          { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' }, index: 0 }], reasoning_content: 'thought' },
          { role: 'tool', tool_call_id: 't1', content: 'done', name: 'f' },
        ],
        tools: [fn('f')],
      }),
    );
    const body = wire(c);
    assert.deepEqual(body.system, [{ text: 'Be brief.' }]);
    const image = { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } };
    assert.deepEqual(body.messages, [
      { role: 'user', content: [image, image] },
      { role: 'assistant', content: [{ text: 'ok' }] },
      { role: 'user', content: [{ document: { format: 'pdf', name: 'report', source: { bytes: 'JVBERi0=' } } }, { text: 'read' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'done' }] } }] },
    ]);
    assert.deepEqual(c.removed, [
      'messages[0].content[1]',
      'messages[0].name',
      'messages[1].content[0].image_url.detail',
      'messages[1].name',
      'messages[2].content[1]',
      'messages[2].refusal',
      'messages[3].content[1].x',
      'messages[4].tool_calls[0].index',
      'messages[4].reasoning_content',
      'messages[5].name',
    ]);
  });

  it('cache_control and prompt_cache_breakpoint become cachePoint blocks (after the toolResult in a tool message); a tool result carries its image', () => {
    const c = call(
      base({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: [{ type: 'text', text: 'U', prompt_cache_breakpoint: { mode: 'explicit' } }] },
          { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{"q":1}' } }] },
          { role: 'tool', tool_call_id: 't1', content: [{ type: 'text', text: 'R' }, { type: 'image_url', image_url: { url: PNG }, cache_control: { type: 'ephemeral' } }] },
        ],
        tools: [fn('f')],
      }),
    );
    const body = wire(c);
    assert.deepEqual(body.system, [{ text: 'S' }, { cachePoint: { type: 'default' } }]);
    assert.deepEqual(body.messages[0].content, [{ text: 'U' }, { cachePoint: { type: 'default' } }]);
    assert.deepEqual(body.messages[2].content, [
      { toolResult: { toolUseId: 't1', content: [{ text: 'R' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }] } },
      { cachePoint: { type: 'default' } },
    ]);
    assert.deepEqual(c.removed, []);
  });

  it('refuses an http image, an audio part, a refusal outside an assistant message, an unknown role, arguments that are not JSON', () => {
    const msg = (m: Record<string, unknown>) => base({ messages: [m] });
    assert.equal(refusal(() => wire(call(msg({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png' } }] })))).param, 'messages[0].content[0].image_url.url');
    assert.equal(refusal(() => wire(call(msg({ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] })))).param, 'messages[0].content[0].type');
    assert.equal(refusal(() => wire(call(msg({ role: 'user', content: [{ type: 'refusal', refusal: 'x' }] })))).param, 'messages[0].content[0].type');
    assert.equal(refusal(() => wire(call(msg({ role: 'function', name: 'f', content: 'x' })))).param, 'messages[0].role');
    assert.equal(refusal(() => wire(call(msg({ role: 'assistant', tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: '{' } }] })))).param, 'messages[0].tool_calls[0].function.arguments');
  });
});

describe('Responses → Converse (through chat): the same rules, in the Responses client\'s names', () => {
  it('text.format json_schema reaches outputConfig.textFormat; json_object refused naming text.format.type', () => {
    const c = call({ model: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', input: 'x', text: { format: { type: 'json_schema', name: 'p', schema: SCHEMA, strict: true, description: 'A place' } } });
    assert.deepEqual(wire(c, openAIResponsesToBedrockConverse).outputConfig, {
      textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(SCHEMA), name: 'p', description: 'A place' } } },
    });
    assert.deepEqual(c.removed, []);
    const err = refusal(() => openAIResponsesToBedrockConverse.translateRequest(call({ model: 'm', input: 'x', text: { format: { type: 'json_object' } } })));
    assert.equal(err.param, 'text.format.type');
  });

  it('a temperature above 1 is refused naming temperature', () => {
    const err = refusal(() => openAIResponsesToBedrockConverse.translateRequest(call({ model: 'm', input: 'x', temperature: 1.5 })));
    assert.equal(err.param, 'temperature');
    assert.match(err.message, /between 0 and 1/);
  });

  it('an image detail, strict tools and parallel_tool_calls false are recorded under their Responses paths', () => {
    const c = call({
      model: 'us.amazon.nova-micro-v1:0',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: PNG, detail: 'high' }] }],
      tools: [
        { type: 'function', name: 'a', parameters: SCHEMA, strict: true },
        { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'b', parameters: SCHEMA, strict: true }] },
      ],
      parallel_tool_calls: false,
    });
    const body = wire(c, openAIResponsesToBedrockConverse);
    assert.deepEqual(body.toolConfig.tools.map((t: any) => t.toolSpec.name), ['a', 'ns__b']);
    assert.deepEqual(c.removed, ['tools[0].strict', 'tools[1].tools[0].strict', 'input[0].content[1].detail', 'parallel_tool_calls']);
  });
});
