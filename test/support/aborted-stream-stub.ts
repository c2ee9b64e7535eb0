/**
 * A stub provider for test/e2e-aborted-stream-usage.test.ts, run in its own process: endless streams that
 * send one event every 20 ms until the gateway goes away, so a client can abort in the middle of an answer.
 *
 * - `POST …/chat/completions` (OpenAI chat, `stream: true`): a role chunk, then one content chunk per tick
 *   (`"word<n> "`), or with function tools one `tool_calls` chunk naming `lookup`, then argument pieces
 *   (`{"q":"`, then `"word<n> "` pieces); never a usage chunk (it would come last, after the finish reason).
 * - `POST …/messages` (Anthropic Messages, `stream: true`): `message_start` whose usage is
 *   {@link MESSAGE_START_USAGE} (as Anthropic's: the input counts and `output_tokens: 1`), `content_block_start`,
 *   then one `text_delta` per tick; never `message_delta` (its usage would come last).
 * Event shapes follow the recorded streams of test/fixtures/providers/ (OpenAI chat chunks, Anthropic's
 * "Streaming Messages"). `GET /__closed` answers how many streams closed before the stub ended them.
 */
import type http from 'node:http';
import { MESSAGE_START_USAGE } from './aborted-stream-usage.ts';
import { sendJson, serveScripted, type Json } from './scripted-stub.ts';


/** How often a stream sends its next event (ms). */
const TICK_MS = 20;

let closedEarly = 0;

/** Writes `first`, then `next(n)` every tick until the gateway closes the connection. */
function endless(res: http.ServerResponse, first: string[], next: (n: number) => string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.on('close', () => {
    if (!res.writableFinished) closedEarly++;
  });
  for (const e of first) res.write(e);
  let n = 0;
  const tick = (): void => {
    if (res.destroyed) return;
    res.write(next(n++));
    setTimeout(tick, TICK_MS);
  };
  setTimeout(tick, TICK_MS);
}

const chunk = (delta: Json): string =>
  `data: ${JSON.stringify({ id: 'chatcmpl-aborted', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta, logprobs: null, finish_reason: null }], usage: null })}\n\n`;

/** An OpenAI chat stream: text, or one tool call's arguments, without end. */
function chatStream(res: http.ServerResponse, body: Json): void {
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  if (!tools) return endless(res, [chunk({ role: 'assistant', content: '' })], (n) => chunk({ content: `word${n} ` }));
  const call = { index: 0, id: 'call_aborted', type: 'function', function: { name: 'lookup', arguments: '' } };
  endless(res, [chunk({ role: 'assistant', content: null, tool_calls: [call] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":"' } }] })], (n) =>
    chunk({ tool_calls: [{ index: 0, function: { arguments: `word${n} ` } }] }),
  );
}

const event = (name: string, data: Json): string => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

/** An Anthropic Messages stream: `message_start`, one text block, without end. */
function messagesStream(res: http.ServerResponse, body: Json): void {
  const message = { id: 'msg_aborted', type: 'message', role: 'assistant', model: String(body.model), content: [], stop_reason: null, stop_sequence: null, usage: MESSAGE_START_USAGE };
  endless(
    res,
    [event('message_start', { type: 'message_start', message }), event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })],
    (n) => event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: `word${n} ` } }),
  );
}

serveScripted(
  (path, body, res) => {
    if (path === '/__closed') return sendJson(res, 200, { closedEarly });
    if (body.stream !== true) throw new Error('this stub answers streams only');
    if (path.endsWith('/chat/completions')) return chatStream(res, body);
    if (path.endsWith('/messages')) return messagesStream(res, body);
    throw new Error(`no such path ${path}`);
  },
  (message) => ({ error: { message, type: 'invalid_request_error' } }),
);
