/**
 * A provider stub that misbehaves in the ways a gateway must not pass on, run in its own process
 * (`node --import tsx test/support/hostile-provider-stub.ts`) like `stub-upstream.ts`. The request's
 * `model` (after any `<provider>/` prefix; Bedrock's: the model id of the path `/model/<id>/<action>`, after
 * any `…anthropic.claude-`) picks the behaviour; the answer's shape follows the path (`…/messages`:
 * Anthropic's; `/model/…`: Bedrock's; under `/v1beta/openai/`: Gemini's compatibility endpoint, whose
 * errors are OpenAI's object in a one-element array; `…/chat/completions`, `…/embeddings`,
 * `…/responses`: OpenAI's recorded fixtures of test/fixtures/providers/):
 *   - `echo-key-401` → an error whose message repeats the credential the gateway sent (`x-amz-security-token`: the
 *     session token of SigV4 credentials, else `Authorization`, else `x-api-key`), as OpenAI's "Incorrect API key provided: …" does (masked there; a
 *     misbehaving provider may not mask it): 401 (OpenAI, Anthropic), 400 `INVALID_ARGUMENT`
 *     (Gemini), 403 `UnrecognizedClientException` (Bedrock);
 *   - `echo-key-stream` → a 200 stream that starts, then fails with the provider's error event
 *     repeating that credential: chat chunks then `data: {"error": …}` (OpenAI-compatible),
 *     `message_start` then `event: error` (Anthropic), an event then an exception frame (Bedrock's
 *     ConverseStream and InvokeModelWithResponseStream, framed with @smithy/eventstream-codec);
 *     `echo-key-stream-chunk` → on InvokeModelWithResponseStream, Anthropic's own `error` event in a chunk instead;
 *   - `echo-key-escaped-401`, `echo-key-escaped-stream-chunk` → as `echo-key-401` and `echo-key-stream-chunk`, the
 *     JSON written with `/` escaped as `\/` (as PHP's and some Java encoders write it), so a credential with `/`
 *     (base64: a Bedrock API key) is not in the body as sent;
 *   - `echo-key-errortype-401` (Bedrock) → as `echo-key-401`, the credential in its `x-amzn-errortype` header only
 *     (the exception name Bedrock's mapping copies into the error's `code`);
 *   - `echo-key-200` → the fixture, with an `x-echo` response header carrying that credential;
 *   - `hop-nominated` → the fixture, with `Connection: close, x-secret`, `x-secret: hop` (a header
 *     the Connection header makes hop-by-hop) and `x-kept: yes`;
 *   - `proto-headers` → the fixture, with headers named `constructor` and `__proto__`;
 *   - `ratelimit-headers` → the fixture, with the provider's own rate-limit headers as OpenRouter and Together
 *     name them (`X-RateLimit-Limit`, `-Remaining`, `-Reset`), the IETF draft's `RateLimit`, and OpenAI's
 *     `x-ratelimit-limit-requests` (test/fixtures/providers/openai/responses-text.headers.json);
 *   - `retry-after-<n>` → 429 with `Retry-After: <n>` (seconds); `retry-after-date-<n>` → 429 with
 *     `Retry-After` the HTTP-date <n> seconds from now;
 *   - `malformed-then-trickle` → a 200 stream (chat chunks, or Anthropic's events on `…/messages`) whose second
 *     event is not JSON, then a valid event every 100 ms for 20 s, as a provider still generating would;
 *     `POST /__cut` answers `{cut}`, how many of these streams the gateway closed before their end;
 *   - anything else → the fixture.
 * `GET /__requests` lists the requests received (with their headers), `DELETE` clears them.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

const fixture = (p: string): Buffer => readFileSync(new URL(`../fixtures/providers/${p}`, import.meta.url));
const CHAT = fixture('openai/chat-completion.json');
const MESSAGE = fixture('anthropic/message.json');
const RESPONSE = fixture('openai/responses-text.json');
const EMBEDDINGS = fixture('openai/embeddings.json');
const RATE_LIMITED = fixture('openai/error-429.json');

/** The error a provider answers `echo-key-401` with, by the path's provider (see the module comment). */
function echoKeyError(path: string, credential: string): { status: number; body: Json | Json[]; headers?: Record<string, string> } {
  if (path.endsWith('/messages')) return { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${credential}` } } };
  if (path.startsWith('/model/')) {
    return { status: 403, body: { message: `The security token included in the request is invalid: ${credential}` }, headers: { 'x-amzn-errortype': 'UnrecognizedClientException:http://internal.amazon.com/coral/com.amazon.coral.service/' } };
  }
  if (path.includes('/v1beta/openai/')) return { status: 400, body: [{ error: { code: 400, message: `API key not valid: ${credential}. Please pass a valid API key.`, status: 'INVALID_ARGUMENT' } }] };
  return {
    status: 401,
    body: { error: { message: `Incorrect API key provided: ${credential}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
  };
}

/** One SSE event (`event:` line only when named). */
const sse = (data: Json, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/** An event-stream frame (Bedrock's streams): an event of `type`, or an exception named `type`. */
async function bedrockFrame(messageType: 'event' | 'exception', type: string, payload: Json): Promise<Buffer> {
  const [{ EventStreamCodec }, { fromUtf8, toUtf8 }] = await Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]);
  const codec = new EventStreamCodec(toUtf8, fromUtf8);
  const typeHeader = messageType === 'event' ? ':event-type' : ':exception-type';
  return Buffer.from(
    codec.encode({
      headers: { [typeHeader]: { type: 'string', value: type }, ':content-type': { type: 'string', value: 'application/json' }, ':message-type': { type: 'string', value: messageType } },
      body: fromUtf8(JSON.stringify(payload)),
    }),
  );
}

/** JSON text of `value`, `/` escaped as `\/` when `escaped`. */
const jsonText = (value: Json | Json[], escaped = false): string => (escaped ? JSON.stringify(value).replaceAll('/', '\\/') : JSON.stringify(value));

/** An InvokeModelWithResponseStream `chunk` frame carrying Anthropic's stream event `event` (its JSON `/`-escaped when `escaped`). */
const invokeChunk = (event: Json, escaped = false): Promise<Buffer> => bedrockFrame('event', 'chunk', { bytes: Buffer.from(jsonText(event, escaped)).toString('base64') });

/**
 * `echo-key-stream`: a 200 stream that starts, then fails with an error event repeating `credential`;
 * `inChunk`: Bedrock's InvokeModel stream fails with Anthropic's error event in a chunk, not an exception frame
 * (see the module comment).
 */
function echoKeyStream(path: string, credential: string, res: http.ServerResponse, inChunk = false, escaped = false): void {
  const message = `upstream overloaded for key ${credential}`;
  if (path.startsWith('/model/')) {
    const first = path.endsWith('/converse-stream')
      ? bedrockFrame('event', 'messageStart', { role: 'assistant' })
      : invokeChunk({ type: 'message_start', message: { id: 'msg_echo', type: 'message', role: 'assistant', content: [], model: 'claude', usage: { input_tokens: 1, output_tokens: 0 } } });
    const failure = inChunk ? invokeChunk({ type: 'error', error: { type: 'overloaded_error', message } }, escaped) : bedrockFrame('exception', 'modelStreamErrorException', { message });
    void Promise.all([first, failure]).then((frames) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      for (const f of frames) res.write(f);
      res.end();
    });
    return;
  }
  if (path.endsWith('/messages')) {
    return sendSse(res, [
      sse({ type: 'message_start', message: { id: 'msg_echo', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }, 'message_start'),
      sse({ type: 'error', error: { type: 'overloaded_error', message } }, 'error'),
    ]);
  }
  sendSse(res, [
    sse({ id: 'chatcmpl-echo', object: 'chat.completion.chunk', created: 1, model: 'echo', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
    sse({ error: { message, type: 'server_error', param: null, code: null } }),
  ]);
}

/** How many `malformed-then-trickle` streams were closed by the gateway before their end. */
let cut = 0;

/** `malformed-then-trickle` (see the module comment). */
function malformedThenTrickle(path: string, res: http.ServerResponse): void {
  const messages = path.endsWith('/messages');
  const event = messages
    ? sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'more' } }, 'content_block_delta')
    : sse({ id: 'chatcmpl-trickle', object: 'chat.completion.chunk', created: 1, model: 'trickle', choices: [{ index: 0, delta: { content: 'more' }, finish_reason: null }] });
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  res.write(
    messages
      ? sse({ type: 'message_start', message: { id: 'msg_trickle', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }, 'message_start') +
          sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start')
      : sse({ id: 'chatcmpl-trickle', object: 'chat.completion.chunk', created: 1, model: 'trickle', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
  );
  res.write(messages ? 'event: content_block_delta\ndata: {"type": "content_block_delta", not json\n\n' : 'data: {"id": "chatcmpl-trickle", not json\n\n');
  let sent = 0;
  const timer = setInterval(() => {
    if (++sent <= 200) return void res.write(event);
    clearInterval(timer);
    res.end(messages ? '' : 'data: [DONE]\n\n');
  }, 100);
  res.on('close', () => {
    clearInterval(timer);
    if (!res.writableFinished) cut++;
  });
}

function okBody(path: string): Buffer {
  if (path.endsWith('/messages')) return MESSAGE;
  if (path.endsWith('/responses')) return RESPONSE;
  if (path.endsWith('/embeddings')) return EMBEDDINGS;
  return CHAT;
}

/** The 200 fixture of `path` with `headers` (pairs, so names like `__proto__` stay names). */
function okWith(res: http.ServerResponse, path: string, headers: Array<[string, string]>): void {
  const body = okBody(path);
  res.writeHead(200, [['content-type', 'application/json'], ['content-length', String(body.length)], ...headers].flat());
  res.end(body);
}

serveScripted(
  (path, body, res) => {
    const req = res.req;
    if (path === '/__cut') return sendJson(res, 200, { cut });
    const credential = String(req.headers['x-amz-security-token'] ?? req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['api-key'] ?? '');
    const bedrockModel = /^\/model\/([^/]+)\//.exec(path)?.[1];
    const model = bedrockModel !== undefined ? decodeURIComponent(bedrockModel).replace(/^.*anthropic\.claude-/, '') : String(body.model ?? '').replace(/^[a-z]+\//, '');
    const escaped = model.startsWith('echo-key-escaped-');
    const echo = escaped ? model.replace('echo-key-escaped-', 'echo-key-') : model;
    if (echo === 'echo-key-401') {
      const error = echoKeyError(path, credential);
      return sendJson(res, error.status, Buffer.from(jsonText(error.body, escaped)), error.headers);
    }
    if (model === 'echo-key-errortype-401') {
      return sendJson(res, 403, { message: 'The security token included in the request is invalid.' }, { 'x-amzn-errortype': credential });
    }
    if (echo === 'echo-key-stream' || echo === 'echo-key-stream-chunk') return echoKeyStream(path, credential, res, echo === 'echo-key-stream-chunk', escaped);
    if (model === 'malformed-then-trickle') return malformedThenTrickle(path, res);
    if (model === 'echo-key-200') return okWith(res, path, [['x-echo', credential], ['x-request-id', 'req_echo']]);
    if (model === 'hop-nominated') return okWith(res, path, [['connection', 'close, x-secret'], ['x-secret', 'hop'], ['x-kept', 'yes']]);
    if (model === 'proto-headers') return okWith(res, path, [['constructor', 'c1'], ['__proto__', 'p1'], ['x-kept', 'yes']]);
    if (model === 'ratelimit-headers') {
      return okWith(res, path, [['X-RateLimit-Limit', '100000'], ['X-RateLimit-Remaining', '99999'], ['X-RateLimit-Reset', '60'], ['RateLimit', '"provider";r=99999;t=60'], ['x-ratelimit-limit-requests', '5000']]);
    }
    const after = /^retry-after-(date-)?(\d+)$/.exec(model);
    if (after) {
      const seconds = Number(after[2]);
      const value = after[1] ? new Date(Date.now() + seconds * 1000).toUTCString() : String(seconds);
      res.writeHead(429, { 'content-type': 'application/json', 'content-length': RATE_LIMITED.length, 'retry-after': value });
      return res.end(RATE_LIMITED);
    }
    return okWith(res, path, []);
  },
  (message: string): Json => ({ error: { message } }),
);
