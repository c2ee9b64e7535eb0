/**
 * Bench stub provider for the open-streams scenario: every `POST …/chat/completions` is answered
 * with an OpenAI-style SSE stream that stays open until the bench releases it, so the proxy holds
 * many streams at once (the test stub's `slow-stream` ends after about half a second).
 *
 * - `POST …/chat/completions`: status 200, `text/event-stream`; one chunk at once, then one every
 *   `STUB_HOLD_TICK_MS` (default 1000) while held; on release the final chunk, usage and `[DONE]`.
 *   A stream is ended anyway after `STUB_HOLD_MAX_MS` (default 120000).
 * - `POST /__release`: releases (ends) every open stream; answers `{"released": n}`.
 * - `GET /__open`: `{"open": n}`, the streams currently held.
 *
 * Env: `STUB_PORT` (0 = any; the chosen port is sent over IPC as `{type: 'stub.ready', port}`).
 */
import http from 'node:http';

const TICK_MS = Number(process.env.STUB_HOLD_TICK_MS ?? 1000);
const MAX_MS = Number(process.env.STUB_HOLD_MAX_MS ?? 120_000);

const chunk = (i: number): string =>
  `data: {"id":"chatcmpl-hold","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"tok${i} "},"finish_reason":null}]}\n\n`;
const TAIL =
  'data: {"id":"chatcmpl-hold","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"chatcmpl-hold","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}\n\n' +
  'data: [DONE]\n\n';

interface Held {
  res: http.ServerResponse;
  sent: number;
  timer: NodeJS.Timeout;
  deadline: NodeJS.Timeout;
}
const open = new Set<Held>();

function release(h: Held): void {
  if (!open.delete(h)) return;
  clearInterval(h.timer);
  clearTimeout(h.deadline);
  if (!h.res.destroyed) h.res.end(TAIL);
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  req.resume();
  req.on('end', () => {
    const url = req.url ?? '/';
    if (url === '/__open') return json(res, 200, { open: open.size });
    if (url === '/__release') {
      const n = open.size;
      for (const h of [...open]) release(h);
      return json(res, 200, { released: n });
    }
    if (!url.endsWith('/chat/completions')) return json(res, 404, { error: { message: 'stub-hold: no such path', type: 'invalid_request_error', param: null, code: null } });
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write(chunk(0));
    const h: Held = {
      res,
      sent: 1,
      timer: setInterval(() => res.write(chunk(h.sent++)), TICK_MS),
      deadline: setTimeout(() => release(h), MAX_MS),
    };
    open.add(h);
    res.on('close', () => {
      if (open.delete(h)) {
        clearInterval(h.timer);
        clearTimeout(h.deadline);
      }
    });
  });
});

server.listen(Number(process.env.STUB_PORT ?? 0), '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  if (process.send) process.send({ type: 'stub.ready', port });
  else console.log(`STUB_PORT=${port}`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
