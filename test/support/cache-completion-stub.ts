/**
 * A stub provider for the response cache's completeness tests (test/e2e-cache-complete.test.ts), run
 * in its own process (`node --import tsx test/support/cache-completion-stub.ts`). It plays OpenAI's chat
 * completions (`POST …/chat/completions`, also as Groq), OpenAI's Responses (`POST …/responses`) and
 * Anthropic's Messages (`POST …/messages`), each answering by the request's `model`:
 *   - `complete`: the recorded answer of test/fixtures/providers/, streamed or not, byte for byte;
 *   - `truncated` (streams): a 200 stream the provider ends cleanly but early: chat, two chunks with
 *     `finish_reason: null` and no `data: [DONE]`; Messages, `message_start`, `content_block_start`,
 *     one `content_block_delta` and no `message_stop`; Responses, `response.created`, one
 *     `response.output_text.delta` and no final event;
 *   - `error-then-done` (chat streams): a chunk, an error chunk, then `data: [DONE]` (as vLLM ends a failed stream);
 *   - `incomplete` (Responses streams): the recorded stream with `response.incomplete`
 *     (`max_output_tokens`) for its `response.completed`;
 *   - `large` (Responses streams): the recorded stream with 100 KB of `instructions` echoed in its
 *     `response.completed` (as Codex's are), so the final event starts far from the stream's end;
 *   - `length` (chat streams): the recorded stream with `finish_reason: "length"`;
 *   - `error-body` (not streamed): a 200 whose body is an error object in the API's shape;
 *   - `empty-body` (not streamed): a 200 with an empty body.
 * The truncated streams and error bodies are made here, after the recorded ones (no recording of a
 * provider doing so exists). `GET /__requests` lists the requests received, `DELETE` clears them.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

const FIXTURES = new URL('../fixtures/providers/', import.meta.url);
const fixture = (p: string): string => readFileSync(new URL(p, FIXTURES), 'utf8');

/** A recorded SSE body's events, each with its blank line. */
const eventsOf = (sse: string): string[] => sse.split(/(?<=\n\n)/).filter((e) => e.trim() !== '');

const CHAT = eventsOf(fixture('openai/chat-completion-stream.sse'));
const MESSAGES = eventsOf(fixture('anthropic/message-stream.sse'));
const RESPONSES = eventsOf(fixture('openai/responses-stream.sse'));

/** The recorded Responses stream with its final event's response changed by `edit` (and renamed `type`). */
function responsesEndingWith(type: string, edit: (response: Json) => void): string[] {
  const last = RESPONSES.at(-1)!;
  const data = JSON.parse(last.slice(last.indexOf('data: ') + 6)) as Json;
  data.type = type;
  edit(data.response as Json);
  return [...RESPONSES.slice(0, -1), `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`];
}

const CHAT_STREAMS: Record<string, string[]> = {
  complete: CHAT,
  truncated: CHAT.slice(0, 2).map((e) => e.replace(/"finish_reason":"[a-z]+"/, '"finish_reason":null')),
  'error-then-done': [CHAT[0]!, 'data: {"error":{"message":"upstream model crashed","type":"server_error","param":null,"code":null}}\n\n', 'data: [DONE]\n\n'],
  length: CHAT.map((e) => e.replace('"finish_reason":"stop"', '"finish_reason":"length"')),
};
const MESSAGES_STREAMS: Record<string, string[]> = {
  complete: MESSAGES,
  truncated: MESSAGES.filter((e) => /^event: (message_start|content_block_start)\n/.test(e)).concat(MESSAGES.find((e) => e.startsWith('event: content_block_delta\n'))!),
};
const RESPONSES_STREAMS: Record<string, string[]> = {
  complete: RESPONSES,
  truncated: [RESPONSES[0]!, RESPONSES.find((e) => e.startsWith('event: response.output_text.delta\n'))!],
  incomplete: responsesEndingWith('response.incomplete', (r) => Object.assign(r, { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } })),
  large: responsesEndingWith('response.completed', (r) => (r.instructions = 'Be brief. '.repeat(10_000))),
};

const OPENAI_ERROR = { error: { message: 'quota', type: 'insufficient_quota', param: null, code: 'insufficient_quota' } };
const ANTHROPIC_ERROR = { type: 'error', error: { type: 'overloaded_error', message: 'quota' } };

/** The answer of one API: its streams, its recorded body, its error body. */
function answer(res: http.ServerResponse, body: Json, streams: Record<string, string[]>, recorded: string, errorBody: Json): void {
  const model = String(body.model ?? '');
  if (body.stream === true) {
    const events = streams[model];
    if (!events) throw new Error(`no stream for model ${model}`);
    return sendSse(res, events);
  }
  if (model === 'error-body') return sendJson(res, 200, errorBody);
  if (model === 'empty-body') return sendJson(res, 200, Buffer.alloc(0));
  sendJson(res, 200, Buffer.from(recorded));
}

serveScripted(
  (path, body, res) => {
    if (path.endsWith('/chat/completions')) return answer(res, body, CHAT_STREAMS, fixture('openai/chat-completion.json'), OPENAI_ERROR);
    if (path.endsWith('/messages')) return answer(res, body, MESSAGES_STREAMS, fixture('anthropic/message.json'), ANTHROPIC_ERROR);
    if (path.endsWith('/responses')) return answer(res, body, RESPONSES_STREAMS, fixture('openai/responses-text.json'), OPENAI_ERROR);
    throw new Error(`no such path ${path}`);
  },
  (message) => ({ error: { message, type: 'invalid_request_error', param: null, code: null } }),
);
