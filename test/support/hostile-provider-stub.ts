/**
 * A provider stub that misbehaves in the ways a gateway must not pass on, run in its own process
 * (`node --import tsx test/support/hostile-provider-stub.ts`) like `stub-upstream.ts`. The request's
 * `model` (after any `<provider>/` prefix) picks the behaviour; the answer's shape follows the path
 * (`…/messages`: Anthropic's; `…/chat/completions`, `…/embeddings`, `…/responses`: OpenAI's recorded
 * fixtures of test/fixtures/providers/):
 *   - `echo-key-401` → 401 whose message repeats the credential the gateway sent (`Authorization`,
 *     else `x-api-key`), as OpenAI's "Incorrect API key provided: …" does (masked there; a
 *     misbehaving provider may not mask it);
 *   - `echo-key-200` → the fixture, with an `x-echo` response header carrying that credential;
 *   - `hop-nominated` → the fixture, with `Connection: close, x-secret`, `x-secret: hop` (a header
 *     the Connection header makes hop-by-hop) and `x-kept: yes`;
 *   - `proto-headers` → the fixture, with headers named `constructor` and `__proto__`;
 *   - `retry-after-<n>` → 429 with `Retry-After: <n>` (seconds); `retry-after-date-<n>` → 429 with
 *     `Retry-After` the HTTP-date <n> seconds from now;
 *   - anything else → the fixture.
 * `GET /__requests` lists the requests received (with their headers), `DELETE` clears them.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import { sendJson, serveScripted, type Json } from './scripted-stub.ts';

const fixture = (p: string): Buffer => readFileSync(new URL(`../fixtures/providers/${p}`, import.meta.url));
const CHAT = fixture('openai/chat-completion.json');
const MESSAGE = fixture('anthropic/message.json');
const RESPONSE = fixture('openai/responses-text.json');
const EMBEDDINGS = fixture('openai/embeddings.json');
const RATE_LIMITED = fixture('openai/error-429.json');

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
    const credential = String(req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['api-key'] ?? '');
    const model = String(body.model ?? '').replace(/^[a-z]+\//, '');
    if (model === 'echo-key-401') {
      const error = path.endsWith('/messages')
        ? { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key: ${credential}` } }
        : { error: { message: `Incorrect API key provided: ${credential}. You can find your API key at https://platform.openai.com/account/api-keys.`, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };
      return sendJson(res, 401, error);
    }
    if (model === 'echo-key-200') return okWith(res, path, [['x-echo', credential], ['x-request-id', 'req_echo']]);
    if (model === 'hop-nominated') return okWith(res, path, [['connection', 'close, x-secret'], ['x-secret', 'hop'], ['x-kept', 'yes']]);
    if (model === 'proto-headers') return okWith(res, path, [['constructor', 'c1'], ['__proto__', 'p1'], ['x-kept', 'yes']]);
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
