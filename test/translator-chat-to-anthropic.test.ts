/**
 * The chat completions → Messages request translation member by member (proxy/translators/openai-chat-to-anthropic-messages/):
 * every member is mapped, recorded in `call.removed`, or refused with a 400 naming it; `max_tokens` clamped to the
 * model table's output limit; a temperature above Anthropic's 1 refused. And the same rules on the Responses →
 * Messages route, which goes through this translator, named as the Responses client sent them.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { GatewayError } from '../proxy/errors.ts';
import { openAIChatToAnthropicMessages, toAnthropicRequest } from '../proxy/translators/openai-chat-to-anthropic-messages.ts';
import { openAIResponsesToAnthropicMessages } from '../proxy/translators/openai-responses-to-anthropic-messages.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { OPENAI_ONLY_REFUSALS, type RefusedRow } from './support/openai-only-refusals.ts';
import { refusal } from './support/refusal.ts';

const REQUEST_ID = '00000000-0000-4000-8000-000000000001';
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };

function call(body: Record<string, unknown>, provider: string | undefined = 'anthropic'): TranslatorCall {
  return { body: body as unknown as ChatCompletionRequest, stream: body.stream === true, requestId: REQUEST_ID, removed: [], ...(provider ? { provider } : {}) };
}

/** The Messages body sent for `c` (parsed), with `c.removed` filled. */
function wire(c: TranslatorCall, translator = openAIChatToAnthropicMessages): any {
  return JSON.parse(translator.translateRequest(c).toString('utf8'));
}


const base = (extra: Record<string, unknown> = {}) => ({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], ...extra });

describe('chat → Messages: top-level members', () => {
  it('the tester\'s request: json_schema → output_config.format, every other member recorded, max_tokens clamped', () => {
    const c = call(
      base({
        response_format: { type: 'json_schema', json_schema: { name: 'place', schema: SCHEMA, strict: true } },
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: 0.5,
        logit_bias: { '50256': -100 },
        metadata: { tag: 'x' },
        reasoning_effort: 'low',
        store: true,
        service_tier: 'default',
        modalities: ['text'],
        prediction: { type: 'content', content: 'x' },
        logprobs: false,
        top_logprobs: 2,
        foo_unknown: 1,
        max_completion_tokens: 1_000_000,
      }),
    );
    const body = wire(c);
    assert.deepEqual(body, {
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      max_tokens: 64000,
      output_config: { format: { type: 'json_schema', schema: SCHEMA } },
    });
    assert.deepEqual(c.removed, ['seed', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'reasoning_effort', 'store', 'service_tier', 'prediction', 'top_logprobs', 'foo_unknown', 'metadata.tag']);
  });

  it('honoured as they are, not recorded: n 1, logprobs false, modalities text, store false, stream_options, response_format text, null and empty members', () => {
    const c = call(base({ n: 1, logprobs: false, modalities: ['text'], store: false, stream: true, stream_options: { include_usage: true }, response_format: { type: 'text' }, seed: null, metadata: {}, tools: [] }));
    const body = wire(c);
    assert.equal(body.stream, true);
    assert.equal(body.output_config, undefined);
    assert.equal(body.tools, undefined);
    assert.deepEqual(c.removed, []);
  });

  it('top_k, a vendor extra Anthropic takes, is mapped; members named like Object.prototype\'s are recorded, not swallowed', () => {
    const c = call(base({ top_k: 5, ...JSON.parse('{"constructor": 1, "toString": "x", "__proto__": {"a": 1}}') }));
    assert.equal(wire(c).top_k, 5);
    assert.deepEqual(c.removed, ['constructor', 'toString', '__proto__']);
  });

  const refused: RefusedRow[] = [
    ...OPENAI_ONLY_REFUSALS,
    ['response_format json_object (no JSON mode)', { response_format: { type: 'json_object' } }, 'response_format.type'],
    ['an unknown response_format type', { response_format: { type: 'xml' } }, 'response_format.type'],
    ['a json_schema without a schema object', { response_format: { type: 'json_schema', json_schema: { name: 'x' } } }, 'response_format.json_schema.schema'],
    ['temperature above 1 (OpenAI\'s range is 0 to 2)', { temperature: 1.7 }, 'temperature'],
    ['temperature below 0', { temperature: -0.1 }, 'temperature'],
    ['temperature not a number', { temperature: '0.5' }, 'temperature'],
    ['max_completion_tokens not a positive integer', { max_completion_tokens: 0 }, 'max_completion_tokens'],
    ['stop not strings', { stop: [1] }, 'stop'],
    ['metadata not an object', { metadata: 'x' }, 'metadata'],
  ];
  for (const [name, extra, param] of refused) {
    it(`refuses ${name}, naming ${param}`, () => {
      const err = refusal(() => openAIChatToAnthropicMessages.translateRequest(call(base(extra))));
      assert.equal(err.param, param);
      assert.ok(err.message.includes(param.split('.')[0]!), `the message names ${param}: ${err.message}`);
    });
  }

  it('the temperature refusal says Anthropic\'s range; 0 and 1 pass as they are', () => {
    assert.match(refusal(() => toAnthropicRequest(base({ temperature: 1.7 }), false)).message, /between 0 and 1.*got 1\.7/);
    assert.equal(toAnthropicRequest(base({ temperature: 1 }), false).temperature, 1);
    assert.equal(toAnthropicRequest(base({ temperature: 0 }), false).temperature, 0);
  });

  it('max_tokens: clamped to the model table\'s output limit; as sent for a model the table does not know; max_completion_tokens wins and a different max_tokens is recorded', () => {
    assert.equal(wire(call(base({ max_tokens: 1_000_000 }))).max_tokens, 64000);
    assert.equal(wire(call(base({ max_tokens: 1000 }))).max_tokens, 1000);
    assert.equal(wire(call({ ...base({ max_tokens: 1_000_000 }), model: 'claude-from-the-future' })).max_tokens, 1_000_000);
    assert.equal(wire(call(base())).max_tokens, 4096);
    const both = call(base({ max_tokens: 10, max_completion_tokens: 20 }));
    assert.equal(wire(both).max_tokens, 20);
    assert.deepEqual(both.removed, ['max_tokens']);
    const same = call(base({ max_tokens: 20, max_completion_tokens: 20 }));
    wire(same);
    assert.deepEqual(same.removed, []);
  });

  it('the end user: safety_identifier wins (a different user recorded); metadata.user_id when neither is sent; other metadata recorded', () => {
    const c1 = call(base({ safety_identifier: 'safe-1', user: 'u-1' }));
    assert.deepEqual(wire(c1).metadata, { user_id: 'safe-1' });
    assert.deepEqual(c1.removed, ['user']);
    const c2 = call(base({ metadata: { user_id: 'm-1', tag: 'a' } }));
    assert.deepEqual(wire(c2).metadata, { user_id: 'm-1' });
    assert.deepEqual(c2.removed, ['metadata.tag']);
    const c3 = call(base({ user: 'u-1', metadata: { user_id: 'm-1' } }));
    assert.deepEqual(wire(c3).metadata, { user_id: 'u-1' });
    assert.deepEqual(c3.removed, ['metadata.user_id']);
  });

  it('json_schema: name is a label and strict honoured (not recorded), description recorded', () => {
    const c = call(base({ response_format: { type: 'json_schema', json_schema: { name: 'p', schema: SCHEMA, strict: false, description: 'A place' } } }));
    assert.deepEqual(wire(c).output_config, { format: { type: 'json_schema', schema: SCHEMA } });
    assert.deepEqual(c.removed, ['response_format.json_schema.description']);
  });
});

describe('chat → Messages: nested members', () => {
  it('tools: strict true and unknown members recorded, cache_control kept; strict false honoured', () => {
    const c = call(
      base({
        tools: [
          { type: 'function', function: { name: 'a', parameters: SCHEMA, strict: true } },
          { type: 'function', function: { name: 'b', strict: false, examples: [1] }, cache_control: { type: 'ephemeral' } },
        ],
        seed: 1,
      }),
    );
    const body = wire(c);
    assert.deepEqual(body.tools, [
      { name: 'a', input_schema: SCHEMA },
      { name: 'b', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } },
    ]);
    assert.deepEqual(c.removed, ['tools[0].function.strict', 'tools[1].function.examples', 'seed']);
  });

  it('messages: a name, an image detail, a refusal, a system image recorded; a filename becomes the document title; detail auto honoured', () => {
    const c = call(
      base({
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Be brief.' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
          { role: 'user', name: 'alice', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png', detail: 'high' } }, { type: 'image_url', image_url: { url: 'https://x/b.png', detail: 'auto' } }] },
          { role: 'assistant', content: [{ type: 'text', text: 'ok' }, { type: 'refusal', refusal: 'no' }], refusal: 'no', annotations: [] },
          { role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'report.pdf' } }] },
        ],
      }),
    );
    const body = wire(c);
    assert.equal(body.system, 'Be brief.');
    assert.deepEqual(body.messages[0].content, [
      { type: 'image', source: { type: 'url', url: 'https://x/a.png' } },
      { type: 'image', source: { type: 'url', url: 'https://x/b.png' } },
    ]);
    assert.deepEqual(body.messages[1].content, [{ type: 'text', text: 'ok' }]);
    assert.deepEqual(body.messages[2].content, [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'report.pdf' }]);
    assert.deepEqual(c.removed, ['messages[0].content[1]', 'messages[1].content[0].image_url.detail', 'messages[1].name', 'messages[2].content[1]', 'messages[2].refusal']);
  });

  it('an assistant tool call\'s unknown members are recorded; an audio part is refused naming it', () => {
    const c = call(
      base({
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' }, index: 0 }] },
          { role: 'tool', tool_call_id: 't1', content: 'done' },
        ],
      }),
    );
    wire(c);
    assert.deepEqual(c.removed, ['messages[1].tool_calls[0].index']);
    const err = refusal(() => wire(call(base({ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }] }))));
    assert.equal(err.param, 'messages[0].content[0].type');
  });
});

describe('Responses → Messages (through chat): the same rules, in the Responses client\'s names', () => {
  it('temperature above 1 is refused naming temperature', () => {
    const err = refusal(() => openAIResponsesToAnthropicMessages.translateRequest(call({ model: 'claude-haiku-4-5', input: 'x', temperature: 1.5 })));
    assert.equal(err.param, 'temperature');
    assert.match(err.message, /between 0 and 1/);
  });

  it('an image detail, a strict tool and a format description are recorded under their Responses paths', () => {
    const c = call({
      model: 'claude-haiku-4-5',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'https://x/a.png', detail: 'high' }] }],
      tools: [
        { type: 'function', name: 'a', parameters: SCHEMA, strict: true },
        { type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'b', parameters: SCHEMA, strict: true }] },
      ],
      text: { format: { type: 'json_schema', name: 'p', schema: SCHEMA, description: 'A place' } },
    });
    const body = wire(c, openAIResponsesToAnthropicMessages);
    assert.deepEqual(body.output_config, { format: { type: 'json_schema', schema: SCHEMA } });
    assert.deepEqual(body.tools.map((t: any) => t.strict), [undefined, undefined]);
    assert.deepEqual(c.removed, ['tools[0].strict', 'tools[1].tools[0].strict', 'text.format.description', 'input[0].content[1].detail']);
  });
});
