/**
 * A stub provider that answers each request with the next answer a test queued, whatever the path,
 * run in its own process (`node --import tsx test/support/queued-answer-stub.ts`) like
 * `stub-upstream.ts`. For tests that need one exact provider body per request: a recorded fixture's
 * bytes, or a variant of one the test built (the usage and cost tests, test/e2e-usage-cost.test.ts).
 *
 * `POST /__answers` with `[{status?, contentType?, body}, …]` (body: the text to send, byte for
 * byte; status 200 and `application/json` unless said) appends to the queue; every other POST takes
 * the first queued answer, or is a 500 `{"error": {"message": "stub: no answer queued"}}` when none
 * is. `GET /__requests` lists the requests received (the `/__answers` ones too), `DELETE` clears them.
 * Env: `STUB_PORT` (0 = any); the port is sent over IPC as `{type: 'stub.ready', port}`.
 */
import { sendJson, serveScripted, type Json } from './scripted-stub.ts';

/** One queued answer. */
interface Answer {
  status?: number;
  contentType?: string;
  body: string;
}

const queue: Answer[] = [];

serveScripted(
  (path, body, res) => {
    if (path === '/__answers') {
      if (!Array.isArray(body)) throw new Error('/__answers takes an array of {status?, contentType?, body}');
      queue.push(...(body as unknown as Answer[]));
      return sendJson(res, 200, { queued: queue.length });
    }
    const next = queue.shift();
    if (!next) return sendJson(res, 500, { error: { message: 'stub: no answer queued' } });
    const bytes = Buffer.from(next.body, 'utf8');
    const contentType = next.contentType ?? 'application/json';
    // A stream goes chunked, as providers send one; a body with its length.
    const length: Record<string, number> = contentType.startsWith('text/event-stream') ? {} : { 'content-length': bytes.length };
    res.writeHead(next.status ?? 200, { 'content-type': contentType, ...length });
    res.end(bytes);
  },
  (message: string): Json => ({ error: { message } }),
);
