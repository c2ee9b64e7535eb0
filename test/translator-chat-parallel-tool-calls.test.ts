/**
 * Parallel tool calls in a chat-completions answer, as the chat → Messages and chat → Responses translators map them:
 * - Gemini's OpenAI-compatible stream sends each call whole in a chunk of its own, with its own `id` and no
 *   `tool_calls[].index` (or index 0 for every call): captures quoted in THU-MAIC/OpenMAIC#1556,
 *   noho/dayu-agent#45, open-webui/computer#224, su-kaka/gcli2api#406. Each call must become a call of its own.
 * - OpenAI's chat stream may interleave the argument fragments of two calls by `index` (the index says which call a
 *   fragment belongs to: https://platform.openai.com/docs/api-reference/chat-streaming/streaming). Anthropic's
 *   Messages stream never interleaves content blocks (a block gets no delta after its `content_block_stop`:
 *   https://docs.anthropic.com/en/docs/build-with-claude/streaming), which the strict fold below checks.
 * - The non-streamed answers' `tool_calls` arrays carry no index at all: each element is a call.
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { createMessagesStreamTranslator, toMessage } from '../proxy/translators/anthropic-messages-to-openai-chat/index.ts';
import { createResponsesStreamTranslator, toResponse } from '../proxy/translators/openai-responses-to-openai-chat/index.ts';
import { decodeCarried } from '../proxy/translators/shared/carried-reasoning.ts';
import { MAX_STREAM_EVENT_CHARS } from '../proxy/translators/shared/translator-stream.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { events as responsesEvents, fold as foldResponses, run, split, SPLITS } from './support/responses-stream.ts';

const REQUEST_ID = '00000000-0000-4000-8000-000000000001';

function messagesCall(): TranslatorCall {
  const body = { model: 'gemini-2.5-flash', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], stream: true };
  return { body: body as unknown as ChatCompletionRequest, stream: true, requestId: REQUEST_ID, removed: [], provider: 'gemini' };
}

function responsesCall(): TranslatorCall {
  const body = { model: 'gemini-2.5-flash', input: 'hi', stream: true };
  return { body: body as unknown as ChatCompletionRequest, stream: true, requestId: REQUEST_ID, removed: [], provider: 'gemini' };
}

const sse = (...lines: string[]): Buffer => Buffer.from(lines.map((l) => `${l}\n\n`).join(''));
const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'g1', object: 'chat.completion.chunk', created: 1700000000, model: 'gemini-2.5-flash', choices: [{ index: 0, delta, finish_reason: finish }] })}`;
/** A tool call delta; `index` undefined leaves the member out, as Gemini does. */
const call = (index: number | undefined, id: string | undefined, fn: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  ...(index === undefined ? {} : { index }),
  ...(id === undefined ? {} : { id, type: 'function' }),
  function: fn,
  ...extra,
});
const tools = (...calls: Record<string, unknown>[]) => ({ tool_calls: calls });
const USAGE = 'data: {"id":"g1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":8,"total_tokens":18}}';

/** Gemini's parallel calls: each whole, own id, no index; the finish reason `stop` (Gemini's, for tool calls too). */
function geminiStream(index: 0 | undefined): Buffer {
  return sse(
    chunk({ role: 'assistant', ...tools(call(index, 'jm4owj31', { name: 'Read', arguments: '{"file_path":"/a"}' }, { extra_content: { google: { thought_signature: 'SIG_A' } } })) }),
    chunk(tools(call(index, 'k2p9xq07', { name: 'Bash', arguments: '{"command":"ls"}' }))),
    chunk({}, 'stop'),
    USAGE,
    'data: [DONE]',
  );
}

/** Two calls whose argument fragments interleave by index (0, 1, 0, 1), then a third that starts after both. */
const INTERLEAVED = sse(
  chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' }))),
  chunk(tools(call(1, 'call_b', { name: 'Bash', arguments: '{"comm' }))),
  chunk(tools(call(0, undefined, { arguments: 'path":"/a"}' }))),
  chunk(tools(call(1, undefined, { arguments: 'and":"ls"}' }))),
  chunk(tools(call(2, 'call_c', { name: 'Glob', arguments: '{"pattern":"*"}' }))),
  chunk({}, 'tool_calls'),
  'data: [DONE]',
);

/** One call whose every delta carries a fresh id, only the first its name (a provider minting an id per chunk). */
const FRESH_IDS = sse(
  chunk(tools(call(0, 'call_1', { name: 'Read', arguments: '{"file_' }))),
  chunk(tools(call(0, 'call_2', { arguments: 'path":' }))),
  chunk(tools(call(0, 'call_3', { arguments: '"/a"}' }))),
  chunk({}, 'tool_calls'),
  'data: [DONE]',
);

interface MessagesEvent {
  type: string;
  [member: string]: any;
}

/**
 * The events of a Messages SSE body folded as a client that finalises a block at its `content_block_stop` (Claude
 * Code) does, asserting Anthropic's grammar: blocks start in index order, one open at a time (a block starts only
 * after the previous one stopped), every delta for the open block, each tool input parsed at its stop.
 */
function foldMessages(text: string, last = 'message_stop'): { content: any[]; stopReason: string; events: MessagesEvent[] } {
  const list = text.slice(0, -2).split('\n\n').map((raw) => JSON.parse(raw.split('\n')[1]!.slice('data: '.length)) as MessagesEvent);
  assert.equal(list[0]!.type, 'message_start');
  const content: any[] = [];
  let open = -1;
  let json = '';
  let stopReason = '';
  for (const e of list.slice(1)) {
    if (e.type === 'content_block_start') {
      assert.equal(open, -1, `block ${e.index} starts while block ${open} is open`);
      assert.equal(e.index, content.length, 'blocks start in index order');
      content.push(structuredClone(e.content_block));
      open = e.index;
      json = '';
    } else if (e.type === 'content_block_delta') {
      assert.equal(e.index, open, `a delta for block ${e.index} while block ${open} is the open one`);
      if (e.delta.type === 'input_json_delta') json += e.delta.partial_json;
      else if (e.delta.type === 'text_delta') content[open].text += e.delta.text;
      else if (e.delta.type === 'thinking_delta') content[open].thinking += e.delta.thinking;
      else if (e.delta.type === 'signature_delta') content[open].signature += e.delta.signature;
    } else if (e.type === 'content_block_stop') {
      assert.equal(e.index, open, 'the stop is of the open block');
      // A failed stream may stop a call cut mid-arguments: its input is then the fragments as they came.
      if (content[open].type === 'tool_use') content[open].input = last === 'error' ? json : JSON.parse(json === '' ? '{}' : json);
      open = -1;
    } else if (e.type === 'message_delta' || e.type === 'error') {
      assert.equal(open, -1, `every block stopped before ${e.type}`);
      if (e.type === 'message_delta') stopReason = e.delta.stop_reason;
    }
  }
  assert.equal(list.at(-1)!.type, last);
  return { content, stopReason, events: list };
}

/**
 * How a provider's stream fails after a call got text between its argument fragments: its error event, a malformed
 * chunk, or the end of the stream before any finish reason (each fails the translation, ../proxy/translators/shared/openai-chat-chunk-source.ts).
 */
const FAILURES: [string, string[]][] = [
  ['a provider error event', ['event: error\ndata: {"error":{"message":"overloaded","type":"server_error"}}']],
  ['a malformed chunk', ['data: {"id":']],
  ['the end before any finish reason', []],
];
/** The output of a translator whose input ends with an event past MAX_STREAM_EVENT_CHARS, and the error it fails with. */
async function runOversized(mapper: import('node:stream').Transform, ending: string[]): Promise<{ out: string; error: any }> {
  const out: Buffer[] = [];
  mapper.on('data', (d: Buffer) => out.push(Buffer.from(d)));
  const error = new Promise<any>((resolve) => mapper.on('error', resolve));
  mapper.write(heldThenFailed(ending));
  mapper.write(Buffer.from(`data: ${'y'.repeat(MAX_STREAM_EVENT_CHARS + 1)}`));
  return { error: await error, out: Buffer.concat(out).toString('utf8') };
}
const heldThenFailed = (ending: string[]): Buffer => sse(
  chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' }))),
  chunk({ content: 'Let me ' }),
  chunk(tools(call(0, undefined, { arguments: 'path":' }))),
  chunk({ reasoning_content: 'hmm' }),
  chunk({ content: 'look' }),
  ...ending,
);

describe('chat stream → Messages stream: parallel tool calls', () => {
  for (const index of [undefined, 0] as const) {
    it(`Gemini's whole calls with their own ids and ${index === undefined ? 'no index' : 'index 0 each'}: two tool_use blocks`, async () => {
      for (const how of SPLITS) {
        const { content, stopReason } = foldMessages(await run(createMessagesStreamTranslator(messagesCall()), split(geminiStream(index), how)));
        const uses = content.filter((b) => b.type === 'tool_use');
        assert.deepEqual(uses, [
          { type: 'tool_use', id: 'jm4owj31', name: 'Read', input: { file_path: '/a' } },
          { type: 'tool_use', id: 'k2p9xq07', name: 'Bash', input: { command: 'ls' } },
        ]);
        assert.equal(stopReason, 'tool_use');
      }
    });
  }

  it("Gemini's calls stream as they come: the first stops when the second arrives, before the finish chunk; its signature keeps its id", async () => {
    const mapper = createMessagesStreamTranslator(messagesCall());
    const seen: string[] = [];
    mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
    const [first, second, ...rest] = geminiStream(undefined).toString('utf8').split(/(?<=\n\n)/);
    mapper.write(first! + second!);
    await new Promise((r) => setImmediate(r));
    const sofar = seen.join('');
    assert.match(sofar, /"content_block_stop","index":0/);
    assert.match(sofar, /"content_block_start","index":1,"content_block":\{"type":"tool_use","id":"k2p9xq07"/);
    mapper.end(rest.join(''));
    await new Promise((r) => mapper.on('end', r).resume());
    const { content } = foldMessages(seen.join(''));
    assert.equal(content[2].type, 'thinking');
    assert.deepEqual(decodeCarried(content[2].signature), { google: { tool_calls: { jm4owj31: 'SIG_A' } } });
  });

  it('a later delta without an id (Gemini splitting one call) or with the same id continues the call', async () => {
    const input = sse(
      chunk(tools(call(undefined, 'jm4owj31', { name: 'Read', arguments: '{"file_' }))),
      chunk(tools(call(undefined, undefined, { arguments: 'path":' }))),
      chunk(tools(call(undefined, 'jm4owj31', { arguments: '"/a"}' }))),
      chunk({}, 'stop'),
      'data: [DONE]',
    );
    const { content } = foldMessages(await run(createMessagesStreamTranslator(messagesCall()), [input]));
    assert.deepEqual(content, [{ type: 'tool_use', id: 'jm4owj31', name: 'Read', input: { file_path: '/a' } }]);
  });

  it('fragments interleaved by index: each block gets all of its own and none after its stop', async () => {
    for (const how of SPLITS) {
      const c = messagesCall();
      const { content } = foldMessages(await run(createMessagesStreamTranslator(c), split(INTERLEAVED, how)));
      assert.deepEqual(content, [
        { type: 'tool_use', id: 'call_a', name: 'Read', input: { file_path: '/a' } },
        { type: 'tool_use', id: 'call_b', name: 'Bash', input: { command: 'ls' } },
        { type: 'tool_use', id: 'call_c', name: 'Glob', input: { pattern: '*' } },
      ]);
      assert.deepEqual(c.removed, []);
    }
  });

  it("content between a call's argument fragments (vLLM/Qwen's \"\\n\") waits: the input is whole, the text follows the block", async () => {
    for (const how of SPLITS) {
      const c = messagesCall();
      const input = sse(
        chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' }))),
        chunk({ content: '\n' }),
        chunk(tools(call(0, undefined, { arguments: 'path":' }))),
        chunk({ reasoning_content: 'hmm' }),
        chunk(tools(call(0, undefined, { arguments: '"/a"}' }))),
        chunk({}, 'tool_calls'),
        'data: [DONE]',
      );
      const { content, stopReason } = foldMessages(await run(createMessagesStreamTranslator(c), split(input, how)));
      assert.deepEqual(content, [
        { type: 'tool_use', id: 'call_a', name: 'Read', input: { file_path: '/a' } },
        { type: 'text', text: '\n' },
        { type: 'thinking', thinking: 'hmm', signature: '' },
      ]);
      assert.equal(stopReason, 'tool_use');
      assert.deepEqual(c.removed, []);
    }
  });

  for (const [name, ending] of FAILURES) {
    it(`text held while a call is open reaches the client before the error event, after ${name}`, async () => {
      for (const how of SPLITS) {
        const out = await run(createMessagesStreamTranslator(messagesCall()), split(heldThenFailed(ending), how));
        const { content } = foldMessages(out, 'error');
        assert.deepEqual(content.map((b) => b.type === 'tool_use' ? [b.type, b.input] : [b.type, b.text ?? b.thinking]), [
          ['tool_use', '{"file_path":'],
          ['text', 'Let me '],
          ['thinking', 'hmm'],
          ['text', 'look'],
        ]);
      }
    });
  }

  it('text held while a call is open is written before the translator fails on an event past its bound (the exchange writes the error event)', async () => {
    const { out, error } = await runOversized(createMessagesStreamTranslator(messagesCall()), []);
    assert.equal(error.code, 'upstream_response_too_large');
    const { content } = foldMessages(`${out}event: error\ndata: {"type":"error"}\n\n`, 'error');
    assert.deepEqual(content.map((b) => b.text ?? b.thinking ?? b.input), ['{"file_path":', 'Let me ', 'hmm', 'look']);
  });

  it('content after a call that a new call replaces comes between their blocks; plain text still streams at once', async () => {
    const input = sse(
      chunk(tools(call(undefined, 'jm4owj31', { name: 'Read', arguments: '{"file_path":"/a"}' }))),
      chunk({ content: 'and ' }),
      chunk(tools(call(undefined, 'k2p9xq07', { name: 'Bash', arguments: '{"command":"ls"}' }))),
      chunk({}, 'stop'),
      'data: [DONE]',
    );
    const { content } = foldMessages(await run(createMessagesStreamTranslator(messagesCall()), [input]));
    assert.deepEqual(content, [
      { type: 'tool_use', id: 'jm4owj31', name: 'Read', input: { file_path: '/a' } },
      { type: 'text', text: 'and ' },
      { type: 'tool_use', id: 'k2p9xq07', name: 'Bash', input: { command: 'ls' } },
    ]);
    const mapper = createMessagesStreamTranslator(messagesCall());
    const seen: string[] = [];
    mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
    mapper.write(sse(chunk({ content: 'Hel' })));
    await new Promise((r) => setImmediate(r));
    assert.match(seen.join(''), /"text_delta","text":"Hel"/);
    mapper.end(sse(chunk({}, 'stop'), 'data: [DONE]'));
    await new Promise((r) => mapper.on('end', r).resume());
  });

  it('a provider sending a fresh id on each continuation delta, without a name: one call', async () => {
    const c = messagesCall();
    const { content } = foldMessages(await run(createMessagesStreamTranslator(c), [FRESH_IDS]));
    assert.deepEqual(content, [{ type: 'tool_use', id: 'call_1', name: 'Read', input: { file_path: '/a' } }]);
    assert.deepEqual(c.removed, []);
  });

  it('a single call still streams: its block and first fragment are out before the finish chunk', async () => {
    const mapper = createMessagesStreamTranslator(messagesCall());
    const seen: string[] = [];
    mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
    mapper.write(sse(chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' })))));
    await new Promise((r) => setImmediate(r));
    assert.match(seen.join(''), /"content_block_start","index":0,"content_block":\{"type":"tool_use","id":"call_a"/);
    assert.match(seen.join(''), /"partial_json":"\{\\"file_"/);
    mapper.end(sse(chunk(tools(call(0, undefined, { arguments: 'path":"/a"}' }))), chunk({}, 'tool_calls'), 'data: [DONE]'));
    await new Promise((r) => mapper.on('end', r).resume());
  });

  it('the non-streamed answer: several tool_calls without index are a tool_use block each', () => {
    const completion = {
      id: 'g1',
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', tool_calls: [
        { id: 'jm4owj31', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a"}' } },
        { id: 'k2p9xq07', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
      ] } }],
    };
    const message = toMessage(completion, messagesCall());
    assert.deepEqual(message.content, [
      { type: 'tool_use', id: 'jm4owj31', name: 'Read', input: { file_path: '/a' } },
      { type: 'tool_use', id: 'k2p9xq07', name: 'Bash', input: { command: 'ls' } },
    ]);
  });
});

describe('chat stream → Responses stream: parallel tool calls', () => {
  for (const index of [undefined, 0] as const) {
    it(`Gemini's whole calls with their own ids and ${index === undefined ? 'no index' : 'index 0 each'}: two function_call items`, async () => {
      for (const how of SPLITS) {
        const { final } = foldResponses(responsesEvents(await run(createResponsesStreamTranslator(responsesCall()), split(geminiStream(index), how))));
        const calls = final.response.output.filter((i: any) => i.type === 'function_call');
        assert.deepEqual(calls.map((i: any) => [i.call_id, i.name, JSON.parse(i.arguments)]), [
          ['jm4owj31', 'Read', { file_path: '/a' }],
          ['k2p9xq07', 'Bash', { command: 'ls' }],
        ]);
      }
    });
  }

  it('fragments interleaved by index reach their own items', async () => {
    for (const how of SPLITS) {
      const c = responsesCall();
      const { final } = foldResponses(responsesEvents(await run(createResponsesStreamTranslator(c), split(INTERLEAVED, how))));
      assert.deepEqual(final.response.output.map((i: any) => [i.call_id, i.name, JSON.parse(i.arguments)]), [
        ['call_a', 'Read', { file_path: '/a' }],
        ['call_b', 'Bash', { command: 'ls' }],
        ['call_c', 'Glob', { pattern: '*' }],
      ]);
      assert.deepEqual(c.removed, []);
    }
  });

  it("content between a call's argument fragments (vLLM/Qwen's \"\\n\") waits: the arguments are whole, the text and reasoning are items after the call", async () => {
    for (const how of SPLITS) {
      const c = responsesCall();
      const input = sse(
        chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' }))),
        chunk({ content: '\n' }),
        chunk(tools(call(0, undefined, { arguments: 'path":' }))),
        chunk({ reasoning_content: 'hmm' }),
        chunk(tools(call(0, undefined, { arguments: '"/a"}' }))),
        chunk({}, 'tool_calls'),
        'data: [DONE]',
      );
      const list = responsesEvents(await run(createResponsesStreamTranslator(c), split(input, how)));
      const { final } = foldResponses(list);
      const argsDone = list.filter((e) => e.type === 'response.function_call_arguments.done');
      assert.equal(argsDone.length, 1);
      assert.deepEqual(JSON.parse(argsDone[0]!.arguments), { file_path: '/a' });
      const callDone = list.find((e) => e.type === 'response.output_item.done' && e.item.type === 'function_call')!;
      assert.deepEqual(JSON.parse(callDone.item.arguments), { file_path: '/a' });
      assert.deepEqual(final.response.output.map((i: any) => [i.type, i.status]), [['function_call', 'completed'], ['message', 'completed'], ['reasoning', undefined]]);
      assert.deepEqual(final.response.output[1].content.map((p: any) => p.text), ['\n']);
      assert.deepEqual(final.response.output[2].summary, [{ type: 'summary_text', text: 'hmm' }]);
      assert.equal(final.type, 'response.completed');
      assert.deepEqual(c.removed, []);
    }
  });

  for (const [name, ending] of FAILURES) {
    it(`text and reasoning held while a call is open reach the client as items before response.failed, after ${name}`, async () => {
      for (const how of SPLITS) {
        const list = responsesEvents(await run(createResponsesStreamTranslator(responsesCall()), split(heldThenFailed(ending), how)));
        const { final, items } = foldResponses(list);
        assert.equal(final.type, 'response.failed');
        const text = (i: any) => i.type === 'message' ? i.content.map((p: any) => p.text).join('') : i.type === 'reasoning' ? i.summary.map((p: any) => p.text).join('') : i.arguments;
        assert.deepEqual(items.map((i) => [i.type, text(i)]), [
          ['function_call', '{"file_path":'],
          ['message', 'Let me '],
          ['reasoning', 'hmm'],
          ['message', 'look'],
        ]);
        // Every item is done (nothing held is left out of the failed response's output); the cut call and last message say so.
        assert.deepEqual(final.response.output.map((i: any) => [i.type, i.status]), [['function_call', 'incomplete'], ['message', 'completed'], ['reasoning', undefined], ['message', 'incomplete']]);
      }
    });
  }

  it('output held while a call is open is written as items before the translator fails on an event past its bound', async () => {
    const { out, error } = await runOversized(createResponsesStreamTranslator(responsesCall()), []);
    assert.equal(error.code, 'upstream_response_too_large');
    // What the exchange then writes stands in for the translator's response.failed.
    const list = responsesEvents(out);
    assert.deepEqual(list.filter((e) => e.type === 'response.output_item.done').map((e) => [e.item.type, e.item.status]), [['function_call', 'incomplete'], ['message', 'completed'], ['reasoning', undefined], ['message', 'incomplete']]);
    assert.equal(list.filter((e) => e.type === 'response.output_item.added').length, 4);
  });

  it('content between interleaved parallel calls waits until no call can take more: every call whole, the text last', async () => {
    for (const how of SPLITS) {
      const c = responsesCall();
      const input = sse(
        chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' }))),
        chunk(tools(call(1, 'call_b', { name: 'Bash', arguments: '{"comm' }))),
        chunk({ content: '\n' }),
        chunk(tools(call(0, undefined, { arguments: 'path":"/a"}' }))),
        chunk({ content: 'ok' }),
        chunk(tools(call(1, undefined, { arguments: 'and":"ls"}' }))),
        chunk({}, 'length'),
        'data: [DONE]',
      );
      const { final } = foldResponses(responsesEvents(await run(createResponsesStreamTranslator(c), split(input, how))));
      const [a, b, message] = final.response.output;
      assert.deepEqual([a, b].map((i: any) => [i.call_id, i.status, JSON.parse(i.arguments)]), [
        ['call_a', 'completed', { file_path: '/a' }],
        ['call_b', 'completed', { command: 'ls' }],
      ]);
      // The message is the last item: the one a cut (finish reason length) leaves incomplete.
      assert.deepEqual([message.type, message.status, message.content.map((p: any) => p.text)], ['message', 'incomplete', ['\nok']]);
      assert.equal(final.type, 'response.incomplete');
      assert.deepEqual(c.removed, []);
    }
  });

  it('content after a call that a new call replaces comes between their items; plain text and a single call still stream at once', async () => {
    const input = sse(
      chunk(tools(call(undefined, 'jm4owj31', { name: 'Read', arguments: '{"file_path":"/a"}' }))),
      chunk({ content: 'and ' }),
      chunk(tools(call(undefined, 'k2p9xq07', { name: 'Bash', arguments: '{"command":"ls"}' }))),
      chunk({}, 'stop'),
      'data: [DONE]',
    );
    const { final } = foldResponses(responsesEvents(await run(createResponsesStreamTranslator(responsesCall()), [input])));
    assert.deepEqual(final.response.output.map((i: any) => i.type === 'message' ? ['message', i.content[0].text] : [i.type, i.call_id, JSON.parse(i.arguments)]), [
      ['function_call', 'jm4owj31', { file_path: '/a' }],
      ['message', 'and '],
      ['function_call', 'k2p9xq07', { command: 'ls' }],
    ]);
    for (const [first, shown] of [
      [chunk({ content: 'Hel' }), /"response.output_text.delta".*"delta":"Hel"/],
      [chunk(tools(call(0, 'call_a', { name: 'Read', arguments: '{"file_' }))), /"response.function_call_arguments.delta".*"delta":"\{\\"file_"/],
    ] as const) {
      const mapper = createResponsesStreamTranslator(responsesCall());
      const seen: string[] = [];
      mapper.on('data', (d: Buffer) => seen.push(d.toString('utf8')));
      mapper.write(sse(first));
      await new Promise((r) => setImmediate(r));
      assert.match(seen.join(''), shown);
      mapper.end(sse(chunk({}, 'stop'), 'data: [DONE]'));
      await new Promise((r) => mapper.on('end', r).resume());
      foldResponses(responsesEvents(seen.join('')));
    }
  });

  it('a provider sending a fresh id on each continuation delta, without a name: one function_call item', async () => {
    const { final } = foldResponses(responsesEvents(await run(createResponsesStreamTranslator(responsesCall()), [FRESH_IDS])));
    assert.deepEqual(final.response.output.map((i: any) => [i.type, i.call_id, i.name, JSON.parse(i.arguments)]), [
      ['function_call', 'call_1', 'Read', { file_path: '/a' }],
    ]);
  });

  it('the non-streamed answer: several tool_calls without index are a function_call item each', () => {
    const completion = {
      id: 'g1',
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', tool_calls: [
        { id: 'jm4owj31', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/a"}' } },
        { id: 'k2p9xq07', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
      ] } }],
    };
    const response = toResponse(completion, responsesCall()) as { output: any[] };
    assert.deepEqual(response.output.map((i) => [i.type, i.call_id, i.name, i.arguments]), [
      ['function_call', 'jm4owj31', 'Read', '{"file_path":"/a"}'],
      ['function_call', 'k2p9xq07', 'Bash', '{"command":"ls"}'],
    ]);
  });
});
