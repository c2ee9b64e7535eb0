/**
 * A stub model provider, run in its own process (`node --import tsx test/support/stub-upstream.ts`),
 * serving the recorded real provider responses of `test/fixtures/providers/` byte for byte.
 *
 * OpenAI-compatible: `POST …/chat/completions` answers `openai/chat-completion.json`, or with
 * `stream: true` the recorded SSE stream, written in pieces as a provider would. The request's
 * `model` picks other behaviour:
 *   - `tool` → the tool-call fixtures; `deepseek-reasoner` → DeepSeek's reasoning fixtures;
 *   - `groq-stream-error` → Groq's stream that errors midway;
 *   - `error-500`, `error-429`, `error-401` → that status with a fixture body (429 with Retry-After: 1);
 *   - `hang` → never answers; `reset-mid-stream` → sends part of the stream then destroys the socket;
 *     `reset-mid-body` → (not streamed) a 200 with the JSON body's length, half the body, then the
 *     socket is destroyed;
 *   - `reset-mid-event` → (streamed) the first event whole, the first 40 bytes of the second, then the
 *     socket is destroyed; `split-events` → the stream in 7-byte pieces 2 ms apart (every event spans pieces);
 *   - `slow-stream` → the stream with 50 ms between events;
 *   - `delay-<ms>` → (chat completions and Messages) the plain JSON answer after `<ms>` ms;
 *   - `chunks-20` → a synthetic 20-chunk stream (for benchmarks);
 *   - `endless-stream` → a stream that sends a chunk every 20 ms until the client goes away; the
 *     time its response closed is kept under the first message's content (a tag chosen by the test).
 *   - `endless-event` → (streamed) `data: ` and then 1 MiB pieces of `y`, never a line end, as fast as
 *     the connection takes them, until the client goes away (a misbehaving provider); the bytes sent are
 *     kept under the tag as for `endless-stream` (`GET /__sent` while it runs, `/__closed` after);
 *   - `big-event-<MiB>` → (streamed) a chat stream of one content chunk of `<MiB>` MiB of `x` (one event,
 *     written in 1 MiB pieces), then the finish chunk, a usage chunk and `[DONE]`.
 * Anthropic: `POST …/messages` answers `anthropic/message.json` or the recorded stream (with
 * tools: the tool-use fixtures; with `thinking` enabled/adaptive and streaming: the thinking stream),
 * with the recorded response headers of `anthropic/message-stream-thinking-tool-use.headers.json`
 * (`request-id`, `anthropic-ratelimit-*`). Models: `reset-mid-stream` (its first events, then the
 * socket is destroyed); `reset-mid-body` and `stall-mid-body` (the first half of the JSON body, then
 * the socket is destroyed, or nothing more); `error-529` (overloaded), `error-429` (rate limit, with
 * Retry-After: 1), `error-400` (invalid request); `stream-error` (a 200 stream that is one
 * `event: error`). `POST …/messages/count_tokens` answers `anthropic/count-tokens.json` (model
 * `claude-does-not-exist`: the recorded 404).
 * `POST …/embeddings` answers `openai/embeddings.json`.
 * OpenAI Responses (also Azure's `/openai/v1/responses`): `POST …/responses` answers
 * `openai/responses-text.json`, or with `stream: true` the recorded `responses-stream.sse`; with
 * function tools `responses-function-call.json` or `responses-stream-function-call.sse`; with
 * `reasoning` (no tools) `responses-reasoning.json` or `responses-stream-reasoning-summary.sse`; each with
 * the recorded response headers of `openai/responses-text.headers.json` (`x-request-id`,
 * `x-ratelimit-*`, `openai-*`). Models: `error-429` (with Retry-After: 1), `error-400`, `error-401`,
 * `error-500` as for chat completions; `reset-mid-stream` (the stream's first events, then the socket
 * is destroyed); `reset-mid-body` (half the JSON body, then the socket is destroyed).
 * `POST …/responses/input_tokens` answers `openai/responses-input-tokens.json`.
 * `GET …/responses/<id>` answers `responses-text.json` for its own id (with the headers), else OpenAI's
 * 404 body; `DELETE …/responses/<id>` `{"id", "object": "response", "deleted": true}`;
 * `GET …/responses/<id>/input_items` a one-item list; `POST …/responses/<id>/cancel` a 400 (these
 * three bodies follow OpenAI's API reference: no recording exists).
 * Bodies of GET and DELETE requests are recorded as `{}` with `raw` ''.
 * Bedrock: `POST /model/<id>/converse` answers `bedrock/converse.json` (tool-use fixture when the body
 * has `toolConfig`); `/converse-stream` the recorded binary event stream, byte for byte;
 * `/invoke` (an `anthropic.claude` model) `anthropic/message.json`, and `/invoke-with-response-stream`
 * the recorded Anthropic stream framed as Bedrock frames it (each event's JSON base64 in a `chunk`
 * event-stream frame; framed here with @smithy's codec, since no recording of that stream exists).
 * Both refuse a body whose `anthropic_beta` names a beta outside {@link BEDROCK_KNOWN_BETAS} as Bedrock does:
 * 400, `x-amzn-ErrorType: ValidationException`, `{"message": "invalid beta flag"}` (the message Bedrock's
 * users report, e.g. anthropics/claude-code#49370; no recording exists).
 * A path starting `/mode/<behaviour>/` forces that behaviour whatever the model (a failing provider).
 * `GET /__requests` returns the requests received so far (method, url, headers, rawHeaders, the
 * body parsed, and `raw`: the body's text exactly as received) and
 * `DELETE /__requests` clears them — tests assert what the gateway sent upstream.
 * `GET /__closed` returns `{<tag>: {closedAt, finished, bytes?}}` for the `endless-stream` and `endless-event`
 * responses whose connection closed (`closedAt` epoch ms; `finished` false when the stub did not end it
 * itself; `bytes`: what `endless-event` wrote); `GET /__sent` `{<tag>: bytes}` of the `endless-event`
 * responses so far, running or not.
 * Env: `STUB_PORT` (0 = any; the chosen port is printed as `STUB_PORT=<n>` and sent over IPC),
 * `STUB_QUIET=1` to skip recording requests (benchmarks).
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { serveStub } from './scripted-stub.ts';

const FIXTURES = new URL('../fixtures/providers/', import.meta.url);
const fixture = (p: string): Buffer => readFileSync(new URL(p, FIXTURES));

const F = {
  chat: fixture('openai/chat-completion.json'),
  chatTool: fixture('openai/chat-completion-tool-call.json'),
  stream: fixture('openai/chat-completion-stream.sse'),
  streamTool: fixture('openai/chat-completion-stream-tool-call.sse'),
  deepseek: fixture('deepseek/chat-completion-reasoner.json'),
  deepseekStream: fixture('deepseek/chat-completion-stream-reasoner.sse'),
  groqStreamError: fixture('groq/chat-completion-stream-error.sse'),
  error429: fixture('openai/error-429.json'),
  error401: fixture('openai/error-401.json'),
  error400: fixture('openai/error-400-context-length.json'),
  embeddings: fixture('openai/embeddings.json'),
  anthropic: fixture('anthropic/message.json'),
  anthropicTool: fixture('anthropic/message-tool-use.json'),
  anthropicStream: fixture('anthropic/message-stream-recorded.sse'),
  anthropicStreamTool: fixture('anthropic/message-stream-tool-use.sse'),
  anthropicOverloaded: fixture('anthropic/error-overloaded.json'),
  anthropicRateLimited: fixture('anthropic/error-429-rate-limit.json'),
  anthropicInvalid: fixture('anthropic/error-400-invalid-request.json'),
  anthropicStreamThinking: fixture('anthropic/message-stream-thinking.sse'),
  anthropicStreamError: fixture('anthropic/error-stream-event.sse'),
  anthropicCount: fixture('anthropic/count-tokens.json'),
  anthropicCount404: fixture('anthropic/count-tokens-error-404.json'),
  bedrock: fixture('bedrock/converse.json'),
  bedrockTool: fixture('bedrock/converse-tool-use.json'),
  bedrockStream: fixture('bedrock/converse-stream.eventstream'),
  bedrockStreamTool: fixture('bedrock/converse-stream-tool-use.eventstream'),
  responses: fixture('openai/responses-text.json'),
  responsesStream: fixture('openai/responses-stream.sse'),
  responsesTool: fixture('openai/responses-function-call.json'),
  responsesStreamTool: fixture('openai/responses-stream-function-call.sse'),
  responsesReasoning: fixture('openai/responses-reasoning.json'),
  responsesStreamReasoning: fixture('openai/responses-stream-reasoning-summary.sse'),
  responsesInputTokens: fixture('openai/responses-input-tokens.json'),
};

/** Splits an SSE body into its events (each ending in a blank line), keeping the bytes exact. */
/** `body` in pieces of `size` bytes: every event of a stream then spans chunks. */
function splitEvery(body: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += size) out.push(body.subarray(i, i + size));
  return out;
}

function events(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let start = 0;
  for (let i = 0; i + 1 < body.length; i++) {
    if (body[i] === 0x0a && body[i + 1] === 0x0a) {
      out.push(body.subarray(start, i + 2));
      start = i + 2;
      i++;
    }
  }
  if (start < body.length) out.push(body.subarray(start));
  return out;
}

const STREAM_EVENTS = events(F.stream);
function synthetic(n: number): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    parts.push(`data: {"id":"chatcmpl-stub","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"tok${i} "},"finish_reason":null}]}\n\n`);
  }
  parts.push('data: {"id":"chatcmpl-stub","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n');
  parts.push(`data: {"id":"chatcmpl-stub","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":${n},"total_tokens":${10 + n}}}\n\n`);
  parts.push('data: [DONE]\n\n');
  return Buffer.from(parts.join(''));
}
const CHUNKS_20 = events(synthetic(20));

/** Anthropic's recorded response headers a Messages answer carries (names lower-cased; framing and cookies left out). */
const ANTHROPIC_HEADERS: Record<string, string> = (() => {
  const recorded = JSON.parse(fixture('anthropic/message-stream-thinking-tool-use.headers.json').toString('utf8')) as Record<string, string[]>;
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(recorded)) {
    const k = name.toLowerCase();
    if (k === 'request-id' || k.startsWith('anthropic-ratelimit-')) out[k] = values.join(', ');
  }
  return out;
})();

/** OpenAI's recorded Responses headers (names lower-cased): `x-request-id`, `x-ratelimit-*` and `openai-*`. */
const OPENAI_HEADERS: Record<string, string> = (() => {
  const recorded = JSON.parse(fixture('openai/responses-text.headers.json').toString('utf8')) as Record<string, string[]>;
  const out: Record<string, string> = {};
  for (const [name, values] of Object.entries(recorded)) {
    const k = name.toLowerCase();
    if (k === 'x-request-id' || k.startsWith('x-ratelimit-') || k.startsWith('openai-')) out[k] = values.join(', ');
  }
  return out;
})();

/** The id of `responses-text.json`, the one stored response the stub knows. */
const STORED_ID = (JSON.parse(F.responses.toString('utf8')) as { id: string }).id;

/** OpenAI's Responses API at the stub (see the module comment); false when `path` is not one of its paths. */
function responsesApi(req: http.IncomingMessage, res: http.ServerResponse, path: string, body: Record<string, unknown>, model: string): boolean {
  if (path.endsWith('/responses/input_tokens')) {
    json(res, 200, F.responsesInputTokens, OPENAI_HEADERS);
    return true;
  }
  const stored = /\/responses\/([A-Za-z0-9_-]+)(\/input_items|\/cancel)?$/.exec(path);
  if (stored) {
    const [, id, action] = stored;
    if (id !== STORED_ID) {
      json(res, 404, Buffer.from(JSON.stringify({ error: { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', param: null, code: null } })), OPENAI_HEADERS);
    } else if (action === '/input_items') {
      const item = { id: 'msg_stub_input', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is the capital of France?' }] };
      json(res, 200, Buffer.from(JSON.stringify({ object: 'list', data: [item], first_id: item.id, last_id: item.id, has_more: false })), OPENAI_HEADERS);
    } else if (action === '/cancel') {
      json(res, 400, Buffer.from('{"error":{"message":"Only responses created with background=true can be cancelled.","type":"invalid_request_error","param":null,"code":null}}'), OPENAI_HEADERS);
    } else if (req.method === 'DELETE') {
      json(res, 200, Buffer.from(JSON.stringify({ id, object: 'response', deleted: true })), OPENAI_HEADERS);
    } else {
      json(res, 200, F.responses, OPENAI_HEADERS);
    }
    return true;
  }
  if (!path.endsWith('/responses')) return false;
  switch (model) {
    case 'error-429':
      json(res, 429, F.error429, { 'retry-after': '1', ...OPENAI_HEADERS });
      return true;
    case 'error-400':
      json(res, 400, F.error400, OPENAI_HEADERS);
      return true;
    case 'error-401':
      json(res, 401, F.error401, OPENAI_HEADERS);
      return true;
    case 'error-500':
      json(res, 500, Buffer.from('{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}'));
      return true;
    case 'reset-mid-stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', ...OPENAI_HEADERS });
      for (const p of events(F.responsesStream).slice(0, 5)) res.write(p);
      setTimeout(() => res.socket?.destroy(), 30);
      return true;
    }
    case 'reset-mid-body':
      halfBodyThenReset(res, F.responses, OPENAI_HEADERS);
      return true;
  }
  const tools = Array.isArray(body.tools) && (body.tools as Array<{ type?: string }>).some((t) => t.type === 'function');
  const reasoning = body.reasoning !== undefined && body.reasoning !== null && !tools;
  if (body.stream === true) {
    sse(res, events(tools ? F.responsesStreamTool : reasoning ? F.responsesStreamReasoning : F.responsesStream), 0, 'text/event-stream; charset=utf-8', OPENAI_HEADERS);
  } else {
    json(res, 200, tools ? F.responsesTool : reasoning ? F.responsesReasoning : F.responses, OPENAI_HEADERS);
  }
  return true;
}

/** An Anthropic SSE body's events as Bedrock's InvokeModelWithResponseStream frames them (`chunk` events, base64 `bytes`). */
async function bedrockInvokeStream(sseBody: Buffer): Promise<Buffer> {
  const [{ EventStreamCodec }, { fromUtf8, toUtf8 }] = await Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]);
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const frames: Uint8Array[] = [];
  for (const event of events(sseBody)) {
    const data = /^data: (.*)$/m.exec(event.toString('utf8'))?.[1];
    if (!data) continue;
    const payload = JSON.stringify({ bytes: Buffer.from(data).toString('base64') });
    frames.push(
      codec.encode({
        headers: {
          ':event-type': { type: 'string', value: 'chunk' },
          ':content-type': { type: 'string', value: 'application/json' },
          ':message-type': { type: 'string', value: 'event' },
        },
        body: fromUtf8(payload),
      }),
    );
  }
  return Buffer.concat(frames);
}

const quiet = process.env.STUB_QUIET === '1';
const received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: unknown; raw: string }> = [];
const closed: Record<string, { closedAt: number; finished: boolean; bytes?: number }> = {};
const sent: Record<string, number> = {};
/** One piece of an `endless-event` or `big-event-<MiB>` event: 1 MiB with no line end. */
const MIB_OF_Y = Buffer.alloc(1024 * 1024, 'y');
const MIB_OF_X = Buffer.alloc(1024 * 1024, 'x');

/**
 * The betas Bedrock's InvokeModel documents for Anthropic's models (AWS, "Anthropic Claude Messages API",
 * `anthropic_beta`), kept here apart from the gateway's own list: the stub plays Bedrock.
 */
const BEDROCK_KNOWN_BETAS = new Set([
  'computer-use-2024-10-22', 'computer-use-2025-01-24', 'token-efficient-tools-2025-02-19', 'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19', 'dev-full-thinking-2025-05-14', 'context-1m-2025-08-07', 'context-management-2025-06-27',
  'effort-2025-11-24', 'tool-search-tool-2025-10-19', 'tool-examples-2025-10-29',
]);

/** True when an InvokeModel body's `anthropic_beta` names one Bedrock does not know. */
function hasUnknownBeta(betas: unknown): boolean {
  return Array.isArray(betas) && betas.some((b) => !BEDROCK_KNOWN_BETAS.has(b));
}

function json(res: http.ServerResponse, status: number, body: Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length, ...extra });
  res.end(body);
}

/** A 200 JSON answer with the whole body's length, of which only the first half is written before the socket is destroyed. */
function halfBodyThenReset(res: http.ServerResponse, body: Buffer, extra: Record<string, string> = {}): void {
  res.writeHead(200, { ...extra, 'content-type': 'application/json', 'content-length': body.length });
  res.write(body.subarray(0, body.length >> 1));
  setTimeout(() => res.socket?.destroy(), 30);
}

function sse(res: http.ServerResponse, parts: Buffer[], delayMs = 0, contentType = 'text/event-stream; charset=utf-8', extra: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', ...extra });
  if (delayMs === 0) {
    for (const p of parts) res.write(p);
    res.end();
    return;
  }
  let i = 0;
  const next = () => {
    if (res.destroyed) return;
    if (i >= parts.length) return void res.end();
    res.write(parts[i++]);
    setTimeout(next, delayMs);
  };
  next();
}

/** The test's tag of a request: its first message's content (see `endless-stream`). */
function tagOf(body: Record<string, unknown>): string {
  const first = Array.isArray(body.messages) ? (body.messages[0] as { content?: unknown } | undefined) : undefined;
  return typeof first?.content === 'string' ? first.content : '';
}

/** `endless-event`: `data: ` and 1 MiB pieces of `y` with no line end, as fast as the connection drains, until it closes. */
function endlessEvent(res: http.ServerResponse, body: Record<string, unknown>): void {
  const tag = tagOf(body);
  sent[tag] = 0;
  res.on('close', () => (closed[tag] = { closedAt: Date.now(), finished: res.writableFinished, bytes: sent[tag]! }));
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write('data: ');
  const more = (): void => {
    while (!res.destroyed) {
      sent[tag]! += MIB_OF_Y.length;
      if (!res.write(MIB_OF_Y)) return void res.once('drain', more);
    }
  };
  more();
}

/** `big-event-<mib>`: one chat chunk whose content is `mib` MiB of `x`, written in 1 MiB pieces (backpressure kept), then the end of a chat stream. */
function bigEvent(res: http.ServerResponse, mib: number): void {
  const chunk = (rest: string) => `data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[${rest}]}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(chunk('{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}'));
  res.write('data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"');
  let left = mib;
  const more = (): void => {
    while (left > 0 && !res.destroyed) {
      left--;
      if (!res.write(MIB_OF_X)) return void res.once('drain', more);
    }
    if (res.destroyed) return;
    res.write('"},"finish_reason":null}]}\n\n');
    res.write(chunk('{"index":0,"delta":{},"finish_reason":"stop"}'));
    res.write(`data: {"id":"chatcmpl-big","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":${mib * 262144},"total_tokens":${5 + mib * 262144}}}\n\n`);
    res.end('data: [DONE]\n\n');
  };
  more();
}

const server = serveStub((req, res, raw) => {
  const url = req.url ?? '/';
  if (url === '/__requests') {
    if (req.method === 'DELETE') received.length = 0;
    return json(res, 200, Buffer.from(JSON.stringify(received)));
  }
  if (url === '/__closed') return json(res, 200, Buffer.from(JSON.stringify(closed)));
  if (url === '/__sent') return json(res, 200, Buffer.from(JSON.stringify(sent)));
  const text = raw.toString('utf8');
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return json(res, 400, Buffer.from('{"error":{"message":"stub: malformed JSON","type":"invalid_request_error","param":null,"code":null}}'));
  }
  if (!quiet) received.push({ method: req.method ?? '', url, headers: req.headers, rawHeaders: req.rawHeaders, body, raw: text });
  // `/mode/<behaviour>/…` forces a behaviour for every model: one stub can play a failing provider.
  const forced = /^\/mode\/([a-z0-9-]+)\//.exec(url);
  const model = forced ? forced[1]! : String(body.model ?? '');
  const stream = body.stream === true;

  const path = url.split('?')[0]!;
  const delayed = /^delay-(\d+)$/.exec(model);
  if (delayed) {
    const messages = path.endsWith('/messages');
    setTimeout(() => json(res, 200, messages ? F.anthropic : F.chat, messages ? ANTHROPIC_HEADERS : {}), Number(delayed[1]));
    return;
  }
  if (path.endsWith('/embeddings')) return json(res, 200, F.embeddings);
  if (path.includes('/responses') && responsesApi(req, res, path, body, model)) return;
  if (/^\/model\/[^/]+\/converse-stream$/.test(url)) {
    const tools = body.toolConfig !== undefined;
    return sse(res, [tools ? F.bedrockStreamTool : F.bedrockStream], 0, 'application/vnd.amazon.eventstream');
  }
  if (/^\/model\/[^/]+\/converse$/.test(url)) return json(res, 200, body.toolConfig !== undefined ? F.bedrockTool : F.bedrock);
  if (/^\/model\/[^/]+\/invoke(-with-response-stream)?$/.test(url) && hasUnknownBeta(body.anthropic_beta)) {
    return json(res, 400, Buffer.from('{"message":"invalid beta flag"}'), { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' });
  }
  if (/^\/model\/[^/]+\/invoke-with-response-stream$/.test(url)) {
    void bedrockInvokeStream(F.anthropicStream).then((b) => sse(res, [b], 0, 'application/vnd.amazon.eventstream'));
    return;
  }
  if (/^\/model\/[^/]*anthropic\.claude[^/]*\/invoke$/.test(decodeURIComponent(url))) return json(res, 200, F.anthropic);
  if (path.endsWith('/messages/count_tokens')) {
    if (model === 'claude-does-not-exist') return json(res, 404, F.anthropicCount404, ANTHROPIC_HEADERS);
    return json(res, 200, F.anthropicCount, ANTHROPIC_HEADERS);
  }
  if (path.endsWith('/messages')) {
    if (model === 'error-529') return json(res, 529, F.anthropicOverloaded);
    if (model === 'error-429') return json(res, 429, F.anthropicRateLimited, { 'retry-after': '1', ...ANTHROPIC_HEADERS });
    if (model === 'error-400') return json(res, 400, F.anthropicInvalid, ANTHROPIC_HEADERS);
    if (model === 'stream-error') return sse(res, events(F.anthropicStreamError), 0, 'text/event-stream; charset=utf-8', ANTHROPIC_HEADERS);
    if (model === 'reset-mid-stream') {
      const parts = events(F.anthropicStream);
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      for (const p of parts.slice(0, 4)) res.write(p);
      setTimeout(() => res.socket?.destroy(), 30);
      return;
    }
    if (model === 'reset-mid-body') return halfBodyThenReset(res, F.anthropic);
    if (model === 'stall-mid-body') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': F.anthropic.length });
      res.write(F.anthropic.subarray(0, F.anthropic.length >> 1));
      return;
    }
    const tools = Array.isArray(body.tools) && body.tools.length > 0;
    const thinking = (body.thinking as { type?: string } | undefined)?.type;
    if (stream && (thinking === 'enabled' || thinking === 'adaptive') && !tools) return sse(res, events(F.anthropicStreamThinking), 0, undefined, ANTHROPIC_HEADERS);
    if (stream) return sse(res, events(tools ? F.anthropicStreamTool : F.anthropicStream), 0, undefined, ANTHROPIC_HEADERS);
    return json(res, 200, tools ? F.anthropicTool : F.anthropic, ANTHROPIC_HEADERS);
  }
  if (!path.endsWith('/chat/completions')) return json(res, 404, Buffer.from('{"error":{"message":"stub: no such path","type":"invalid_request_error","param":null,"code":null}}'));

  switch (model) {
    case 'error-500':
      return json(res, 500, Buffer.from('{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}'));
    case 'error-429':
      return json(res, 429, F.error429, { 'retry-after': '1' });
    case 'error-401':
      return json(res, 401, F.error401);
    case 'error-400':
      return json(res, 400, F.error400);
    case 'hang':
      return; // never answers
    case 'reset-mid-body':
      return halfBodyThenReset(res, F.chat);
    case 'reset-mid-stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.write(STREAM_EVENTS[0]);
      res.write(STREAM_EVENTS[1]);
      setTimeout(() => res.socket?.destroy(), 30);
      return;
    }
    case 'reset-mid-event': {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.write(STREAM_EVENTS[0]);
      res.write(STREAM_EVENTS[1]!.subarray(0, 40));
      setTimeout(() => res.socket?.destroy(), 30);
      return;
    }
    case 'split-events':
      return sse(res, splitEvery(Buffer.concat(STREAM_EVENTS), 7), 2);
    case 'slow-stream':
      return sse(res, STREAM_EVENTS, 50);
    case 'endless-stream': {
      const first = Array.isArray(body.messages) ? (body.messages[0] as { content?: unknown } | undefined) : undefined;
      const tag = typeof first?.content === 'string' ? first.content : '';
      res.on('close', () => (closed[tag] = { closedAt: Date.now(), finished: res.writableFinished }));
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      let n = 0;
      const tick = () => {
        if (res.destroyed) return;
        res.write(`data: {"id":"chatcmpl-endless","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"tok${n++} "},"finish_reason":null}]}\n\n`);
        setTimeout(tick, 20);
      };
      tick();
      return;
    }
    case 'endless-event':
      return endlessEvent(res, body);
    case 'chunks-20':
      return stream ? sse(res, CHUNKS_20) : json(res, 200, F.chat);
    case 'groq-stream-error':
      return sse(res, events(F.groqStreamError));
    case 'deepseek-reasoner':
      return stream ? sse(res, events(F.deepseekStream)) : json(res, 200, F.deepseek);
  }
  const big = /^big-event-(\d+)$/.exec(model);
  if (big && stream) return bigEvent(res, Number(big[1]));
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  if (stream) return sse(res, tools ? events(F.streamTool) : STREAM_EVENTS);
  return json(res, 200, tools ? F.chatTool : F.chat);
});
server.keepAliveTimeout = 65_000;
