/**
 * Unit tests of what the response cache takes for a complete answer (proxy/endpoints/answer-completion.ts,
 * read backward by proxy/endpoints/sse-tail.ts): per endpoint kind, recorded provider streams and
 * bodies are complete whole and in pieces of any size, and not when cut short, ended by an error, or
 * an error body; the kinds that are never cached have nothing complete.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { isCompleteAnswer } from '../proxy/endpoints/answer-completion.ts';
import { chatCompletions } from '../proxy/endpoints/chat-completions.ts';
import { countTokens } from '../proxy/endpoints/count-tokens.ts';
import { embeddings } from '../proxy/endpoints/embeddings.ts';
import { messages } from '../proxy/endpoints/messages.ts';
import { responses } from '../proxy/endpoints/responses.ts';
import { SseTail } from '../proxy/endpoints/sse-tail.ts';
import type { EndpointKind } from '../proxy/endpoints/types.ts';

const fixture = (p: string): string => readFileSync(new URL(`./fixtures/providers/${p}`, import.meta.url), 'utf8');

/** `text` as pieces of `size` bytes (the last one shorter), as a provider's body may arrive. */
function pieces(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

/** `text` whole and in pieces of 1, 7 and 1000 bytes, each with an empty piece at either end. */
function splits(text: string): Buffer[][] {
  const empty = Buffer.alloc(0);
  return [[Buffer.from(text)], pieces(text, 1), pieces(text, 7), pieces(text, 1000), [empty, ...pieces(text, 7), empty]];
}

/** Asserts that `text`, however split, is (or is not) a complete answer of `kind`. */
function expect(kind: EndpointKind, streamed: boolean, text: string, complete: boolean, what: string): void {
  for (const split of splits(text)) assert.equal(isCompleteAnswer(kind, split, streamed), complete, `${kind.name}: ${what} (${split.length} pieces)`);
}

/** A stream's events (each ending in a blank line), as the recorded SSE files hold them. */
const eventsOf = (sse: string): string[] => sse.split(/(?<=\n\n)/);

describe('streams', () => {
  const chat = fixture('openai/chat-completion-stream.sse');
  const anthropic = fixture('anthropic/message-stream.sse');
  const responsesSse = fixture('openai/responses-stream.sse');

  test('chat completions: complete only when data: [DONE] ends it, after a chunk that is not an error', () => {
    expect(chatCompletions, true, chat, true, 'the recorded stream');
    expect(chatCompletions, true, chat.replaceAll('\n', '\r\n'), true, 'with CRLF line ends');
    const events = eventsOf(chat);
    assert.equal(events.at(-1), 'data: [DONE]\n\n');
    expect(chatCompletions, true, events.slice(0, -1).join(''), false, 'without [DONE]');
    expect(chatCompletions, true, events.slice(0, 3).join(''), false, 'two chunks with finish_reason null, then the end');
    expect(chatCompletions, true, chat.trimEnd(), false, '[DONE] not followed by a blank line');
    expect(chatCompletions, true, chat.trimEnd() + '\n', false, '[DONE] followed by one line end only');
    expect(chatCompletions, true, 'data: [DONE]\n\n', false, '[DONE] alone');
    expect(chatCompletions, true, `${events[0]}data: {"error":{"message":"boom","type":"server_error"}}\n\ndata: [DONE]\n\n`, false, 'an error chunk, then [DONE] (vLLM)');
    expect(chatCompletions, true, `${events[0]}event: error\ndata: {"message":"boom"}\n\ndata: [DONE]\n\n`, false, 'an error event, then [DONE]');
    expect(chatCompletions, true, `${events[0]}data: {"object":"error","message":"boom","type":"BadRequestError","code":400}\n\ndata: [DONE]\n\n`, false, "older vLLM's error chunk, then [DONE]");
    expect(chatCompletions, true, fixture('groq/chat-completion-stream-error.sse'), false, "Groq's stream ending in event: error");
    expect(chatCompletions, true, `${events.slice(0, 3).join('')}data: {"error":{"message":"cut","type":"server_error","code":"upstream_disconnected"}}\n\n`, false, "the gateway's error event");
    expect(chatCompletions, true, `${chat}: keep-alive\n\n`, true, 'a comment after [DONE]');
    expect(chatCompletions, true, `: OPENROUTER PROCESSING\n\n${chat}`, true, 'a comment before the first chunk');
  });

  test('Messages: complete only when event: message_stop ends it', () => {
    expect(messages, true, anthropic, true, 'the recorded stream');
    expect(messages, true, fixture('anthropic/message-stream-thinking-tool-use.sse'), true, 'the recorded thinking and tool-use stream');
    const events = eventsOf(anthropic);
    assert.match(events.at(-1)!, /^event: message_stop\n/);
    expect(messages, true, events.slice(0, -1).join(''), false, 'ended after message_delta');
    expect(messages, true, events.slice(0, 2).join('') + events[3], false, 'message_start, content_block_start, one delta, then the end');
    expect(messages, true, fixture('anthropic/error-stream-event.sse'), false, 'a stream that is one event: error');
    expect(messages, true, `${events.slice(0, 4).join('')}event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`, false, 'an error mid-way');
    expect(messages, true, anthropic.replace(/\n\n$/, '\n'), false, 'message_stop not followed by a blank line');
    expect(messages, true, 'event: message_stop_later\ndata: {"type":"message_stop_later"}\n\n', false, 'an event whose name starts like message_stop');
    // The last `event` line of an event names it (WHATWG SSE); the reader goes backward.
    expect(messages, true, `${events.slice(0, -1).join('')}event: error\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`, true, 'two event lines, message_stop last');
    expect(messages, true, `${events.slice(0, -1).join('')}event: message_stop\nevent: error\ndata: {"type":"message_stop"}\n\n`, false, 'two event lines, error last');
  });

  test('Responses: complete when response.completed or response.incomplete ends it, however large', () => {
    expect(responses, true, responsesSse, true, 'the recorded stream');
    expect(responses, true, fixture('openai/responses-stream-reasoning-summary.sse'), true, 'the recorded reasoning stream');
    const events = eventsOf(responsesSse);
    assert.match(events.at(-1)!, /^event: response\.completed\n/);
    const cut = events.slice(0, -1).join('');
    expect(responses, true, cut, false, 'without its final event');
    expect(responses, true, events[0]! + events.find((e) => e.startsWith('event: response.output_text.delta'))!, false, 'response.created, one delta, then the end');
    const final = (type: string, extra = '') =>
      `event: ${type}\ndata: {"type":"${type}","sequence_number":99,"response":{"id":"resp_1","object":"response","status":"${type.slice(9)}"${extra}}}\n\n`;
    expect(responses, true, cut + final('response.incomplete', ',"incomplete_details":{"reason":"max_output_tokens"}'), true, 'response.incomplete (max_output_tokens)');
    expect(responses, true, cut + final('response.failed'), false, 'response.failed');
    expect(responses, true, `${cut}event: error\ndata: {"type":"error","code":"upstream_disconnected","message":"cut","param":null}\n\n`, false, 'an error event');
    // response.completed repeats the whole response: its start lies far beyond any fixed tail.
    const long = 'x'.repeat(300_000);
    expect(responses, true, cut + final('response.completed', `,"instructions":"${long}"`), true, 'a 300 KB response.completed');
    expect(responses, true, cut + final('response.failed', `,"instructions":"${long}"`), false, 'a 300 KB response.failed');
  });

  test('nothing, or only line ends, is no stream', () => {
    for (const kind of [chatCompletions, messages, responses]) {
      assert.equal(isCompleteAnswer(kind, [], true), false);
      expect(kind, true, '\n\n\n', false, 'only line ends');
    }
  });
});

describe('non-streamed bodies', () => {
  test('a JSON object is complete, an error object, a cut body or an empty one is not', () => {
    const cases: Array<[EndpointKind, string, boolean, string]> = [
      [chatCompletions, fixture('openai/chat-completion.json'), true, 'the recorded completion'],
      [chatCompletions, `\n  ${fixture('openai/chat-completion.json')}\n`, true, 'with whitespace around it'],
      [chatCompletions, '{"error":{"message":"quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}', false, 'an error object'],
      [chatCompletions, ' { "error" : "quota" }', false, 'an error string'],
      [chatCompletions, '{"object":"error","message":"boom","type":"BadRequestError","code":400}', false, "vLLM's error"],
      [chatCompletions, '{"error":null,"id":"chatcmpl-1","object":"chat.completion","choices":[]}', true, 'a null error member'],
      [chatCompletions, '', false, 'an empty body'],
      [chatCompletions, ' \n', false, 'whitespace'],
      [chatCompletions, fixture('openai/chat-completion.json').slice(0, fixture('openai/chat-completion.json').indexOf('"usage"') + 3), false, 'a body cut mid-way'],
      [chatCompletions, '[1,2]', false, 'not an object'],
      [embeddings, fixture('openai/embeddings.json'), true, 'the recorded embeddings'],
      [embeddings, fixture('openai/error-429-insufficient-quota.json'), false, "OpenAI's quota error"],
      [responses, fixture('openai/responses-text.json'), true, 'the recorded response'],
      [responses, fixture('openai/error-400-context-length.json'), false, "OpenAI's error"],
      [messages, fixture('anthropic/message.json'), true, 'the recorded message'],
      [messages, fixture('anthropic/error-overloaded.json'), false, "Anthropic's overloaded error"],
      [messages, '{"error":{"message":"quota"}}', false, 'an OpenAI-format error'],
    ];
    for (const [kind, text, complete, what] of cases) expect(kind, false, text, complete, what);
  });

  test('token counts are never stored', () => {
    expect(countTokens, false, fixture('anthropic/count-tokens.json'), false, 'a count');
  });
});

describe('SseTail', () => {
  test('reads events backward: names, first data lines, comments skipped', () => {
    const text = 'data: a\n\n: comment\n\nevent: x\ndata: b1\ndata: b2\n\nid: 3\ndata:c\n\n';
    for (const size of [1, 3, 1000]) {
      const tail = new SseTail(pieces(text, size));
      assert.equal(tail.terminated, true);
      assert.ok(tail.lastEvent());
      assert.ok(!tail.hasName() && tail.dataIs('c'), 'a data value without the optional space');
      assert.ok(tail.lastEvent());
      assert.ok(tail.nameIs('x') && tail.dataIs('b1') && !tail.dataIs('b2'), 'the first data line');
      assert.ok(tail.lastEvent());
      assert.ok(!tail.hasName() && tail.dataIs('a'), 'the comment block is skipped');
      assert.equal(tail.lastEvent(), false, 'the start of the stream');
    }
    assert.equal(new SseTail([Buffer.from('data: a\n')]).terminated, false);
  });

  test('a long data line straddling pieces is measured whole and its head read in place', () => {
    const long = `{"type":"response.completed","pad":"${'y'.repeat(5000)}"}`;
    for (const size of [1, 10, 100, 4096]) {
      const tail = new SseTail(pieces(`event: response.completed\ndata: ${long}\n\n`, size));
      assert.ok(tail.lastEvent());
      assert.ok(tail.nameIs('response.completed'));
      assert.ok(!tail.dataIs(long.slice(0, 40)), 'not equal to its own head');
      assert.ok(tail.dataMatches((bytes, start, length) => length >= 28 && bytes.toString('latin1', start, start + 28) === '{"type":"response.completed"'));
    }
  });
});
