/**
 * The HTTP side the provider stubs share, each run as its own process: the server of a stub process
 * ({@link serveStub}: a request's whole body to its handler; the port, `STUB_PORT`, 0 = any, printed as
 * `STUB_PORT=<n>` and sent over IPC as `{type: 'stub.ready', port}`), used by every stub (stub-upstream.ts,
 * hazard-stub.ts, the scripted ones); and what the scripted stubs (claude-code-stub.ts, responses-stub.ts) add
 * ({@link serveScripted}): every request recorded (method, url, headers, the body parsed) for `GET /__requests`
 * (`DELETE` clears them), a POST to the stub's `answer`, anything else a 404 in the stub's error shape.
 */
import http from 'node:http';

/** A parsed JSON body. */
export type Json = Record<string, any>;

/** Writes a JSON answer (bytes as given, or `body` serialized) with `headers` added. */
export function sendJson(res: http.ServerResponse, status: number, body: Buffer | Json, headers: Record<string, string> = {}): void {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
  res.writeHead(status, { ...headers, 'content-type': 'application/json', 'content-length': bytes.length });
  res.end(bytes);
}

/** Writes a 200 event stream of `parts`, in order, with `headers` added. */
export function sendSse(res: http.ServerResponse, parts: Array<string | Buffer>, headers: Record<string, string> = {}): void {
  res.writeHead(200, { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  for (const p of parts) res.write(p);
  res.end();
}

/**
 * Starts the stub's server. `answer(path, body, res)` answers a POST (path without the query);
 * what it throws is a 400, and other methods a 404, both as `errorBody(message, status)`.
 */
export function serveScripted(answer: (path: string, body: Json, res: http.ServerResponse) => void, errorBody: (message: string, status: number) => Json): void {
  const received: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: unknown }> = [];
  serveStub((req, res, raw) => {
    const url = req.url ?? '/';
    if (url === '/__requests') {
      if (req.method === 'DELETE') received.length = 0;
      return sendJson(res, 200, Buffer.from(JSON.stringify(received)));
    }
    const text = raw.toString('utf8');
    let body: Json = {};
    try {
      body = text ? (JSON.parse(text) as Json) : {};
    } catch {
      body = { unparsed: text };
    }
    received.push({ method: req.method ?? '', url, headers: req.headers, body });
    if (req.method !== 'POST') return sendJson(res, 404, errorBody(`stub: ${req.method} ${url}`, 404));
    try {
      answer(url.split('?')[0]!, body, res);
    } catch (err) {
      // A script marker with arguments that are not JSON: the test's mistake, said plainly.
      sendJson(res, 400, errorBody(`stub: ${(err as Error).message}`, 400));
    }
  });
}

/**
 * Starts a stub process's server: `handle(req, res, body)` gets each request once its whole body (`body`) has
 * arrived. It listens on 127.0.0.1 at `STUB_PORT` (0 = any), prints `STUB_PORT=<n>` and sends
 * `{type: 'stub.ready', port}` over IPC once listening; the process exits on SIGTERM or when its parent disconnects.
 * Returns the server (for settings such as `keepAliveTimeout`).
 */
export function serveStub(handle: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void): http.Server {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  server.listen(Number(process.env.STUB_PORT ?? 0), '127.0.0.1', () => {
    const port = (server.address() as { port: number }).port;
    console.log(`STUB_PORT=${port}`);
    if (process.send) process.send({ type: 'stub.ready', port });
  });
  process.on('SIGTERM', () => process.exit(0));
  process.on('disconnect', () => process.exit(0));
  return server;
}
