/**
 * A stub of Anthropic's Messages API for structured output, run in its own process
 * (`node --import tsx test/support/structured-output-stub.ts`) like `stub-upstream.ts`: `POST …/messages` whose body
 * has `output_config.format.schema` is answered with JSON text following that schema (./schema-example.ts: a string
 * property `"<name>-value"`, a number 42, a boolean true, an enum's first value, an array of one item); any other with
 * the text {@link PLAIN_TEXT}. `stream: true` gets the same text as a Messages stream, split in two deltas. Answers
 * follow the recorded `anthropic/message.json` and `message-stream.sse` (their id and usage), with the text replaced:
 * no recording of a structured answer exists. `GET /__requests` returns the requests received; `DELETE` clears them.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import type http from 'node:http';
import { exampleOf } from './schema-example.ts';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

/** The answer to a request without a format. */
const PLAIN_TEXT = 'Hello from the structured-output stub.';

/** The text answering `body`: JSON of its format's schema, else the plain text. */
function answerText(body: Json): string {
  const schema = body.output_config?.format?.schema;
  return schema && typeof schema === 'object' ? JSON.stringify(exampleOf(schema as Json)) : PLAIN_TEXT;
}

function message(body: Json, text: string): Json {
  return {
    id: 'msg_01KPaKTJSqAKoZri7Ujrny58',
    type: 'message',
    role: 'assistant',
    model: typeof body.model === 'string' ? body.model : 'claude-sonnet-4-5-20250929',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 11, output_tokens: 6, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function event(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function stream(body: Json, text: string): string[] {
  const { content: _content, stop_reason: _stop, ...start } = message(body, text);
  const half = Math.ceil(text.length / 2);
  return [
    event('message_start', { message: { ...start, content: [], stop_reason: null, usage: { input_tokens: 11, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: text.slice(0, half) } }),
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: text.slice(half) } }),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } }),
    event('message_stop', {}),
  ];
}

const anthropicError = (message: string, status: number): Json => ({ type: 'error', error: { type: status === 404 ? 'not_found_error' : 'invalid_request_error', message } });

serveScripted((path: string, body: Json, res: http.ServerResponse) => {
  if (!path.endsWith('/messages')) return sendJson(res, 404, anthropicError(`stub: no route ${path}`, 404));
  const text = answerText(body);
  if (body.stream === true) return sendSse(res, stream(body, text));
  sendJson(res, 200, message(body, text));
}, anthropicError);
