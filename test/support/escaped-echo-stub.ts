/**
 * A provider stub that echoes the credential the gateway sent in an encoded form, run in its own process
 * (`node --import tsx test/support/escaped-echo-stub.ts`) like hostile-provider-stub.ts. The credential is the token
 * of `Authorization` (after its scheme), else `x-api-key`. The request's `model` (after any `<provider>/` prefix)
 * is `echo-<form>-401` or `echo-<form>-stream`, `<form>` one of ./escaped-echo-forms.ts `FORMS`:
 *   - `echo-<form>-401` → the provider's error (401; Gemini's compatibility endpoint 400 in its one-element array)
 *     whose message carries the credential written in `<form>`, as raw JSON text;
 *   - `echo-<form>-stream` → a 200 stream that starts, then fails with the provider's error event carrying it:
 *     chat chunks then `data: {"error": …}`, or (`…/messages`) `message_start` then `event: error`.
 * Any other POST is a 404. The answer's shape follows the path as in hostile-provider-stub.ts (`…/messages`:
 * Anthropic's; under `/v1beta/openai/`: Gemini's; else OpenAI's). `GET /__requests` lists what was received.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import type http from 'node:http';
import { FORMS } from './escaped-echo-forms.ts';
import { sendJson, sendSse, serveScripted, type Json } from './scripted-stub.ts';

/** What stands for the credential in a body before it is serialized (then replaced by its encoded form). */
const MARK = '@@CREDENTIAL@@';

/** JSON text of `value` with {@link MARK} replaced by `encoded` (raw, so its escapes stay as written). */
const withCredential = (value: Json | Json[], encoded: string): string => JSON.stringify(value).replace(MARK, encoded);

/** The provider's error body for `path`, its message carrying {@link MARK}, and its status. */
function errorOf(path: string): { status: number; body: Json | Json[] } {
  if (path.endsWith('/messages')) return { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${MARK}` } } };
  if (path.includes('/v1beta/openai/')) return { status: 400, body: [{ error: { code: 400, message: `API key not valid: ${MARK}. Please pass a valid API key.`, status: 'INVALID_ARGUMENT' } }] };
  return { status: 401, body: { error: { message: `Incorrect API key provided: ${MARK}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } } };
}

/** One SSE event (`event:` line only when named), its data the JSON of `data` with the credential `encoded`. */
const sse = (data: Json, encoded: string, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${withCredential(data, encoded)}\n\n`;

/** A 200 stream that starts, then fails with an error event carrying the credential `encoded`. */
function failingStream(path: string, encoded: string, res: http.ServerResponse): void {
  const message = `upstream overloaded for key ${MARK}`;
  if (path.endsWith('/messages')) {
    return sendSse(res, [
      sse({ type: 'message_start', message: { id: 'msg_echo', type: 'message', role: 'assistant', content: [], model: 'claude-sonnet-4-5', stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } }, '', 'message_start'),
      sse({ type: 'error', error: { type: 'overloaded_error', message } }, encoded, 'error'),
    ]);
  }
  sendSse(res, [
    sse({ id: 'chatcmpl-echo', object: 'chat.completion.chunk', created: 1, model: 'echo', choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }, ''),
    sse({ error: { message, type: 'server_error', param: null, code: null } }, encoded),
  ]);
}

serveScripted(
  (path, body, res) => {
    const req = res.req;
    const authorization = req.headers.authorization;
    const credential = authorization !== undefined ? authorization.slice(authorization.indexOf(' ') + 1) : String(req.headers['x-api-key'] ?? '');
    const model = String(body.model ?? '').replace(/^[a-z]+\//, '');
    const m = /^echo-([a-z]+)-(401|stream)$/.exec(model);
    const form = m ? FORMS[m[1]!] : undefined;
    if (!m || form === undefined) return sendJson(res, 404, { error: { message: `stub: no behaviour for model ${model}` } });
    const encoded = form(credential);
    if (m[2] === 'stream') return failingStream(path, encoded, res);
    const error = errorOf(path);
    sendJson(res, error.status, Buffer.from(withCredential(error.body, encoded)));
  },
  (message: string): Json => ({ error: { message } }),
);
