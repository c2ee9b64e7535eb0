/**
 * Bench baseline (b3): the gateway's proxy library with nothing of the gateway's work —
 * `httpProxy.createProxyServer({ target, agent: keepAliveAgent })` and `proxy.web(req, res)`.
 * Run as its own process by bench/run.ts.
 *
 * Env: `FORWARD_TARGET` (upstream origin, e.g. `http://127.0.0.1:9000`), `FORWARD_PORT` (0 = any;
 * the chosen port is sent over IPC as `{type: 'forward.ready', port}`).
 */
import http from 'node:http';
import httpProxy from 'http-proxy-3';

const target = process.env.FORWARD_TARGET ?? 'http://127.0.0.1:9000';
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
const proxy = httpProxy.createProxyServer({ target, agent });
proxy.on('error', (_err, _req, res) => {
  if (res instanceof http.ServerResponse) {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end();
  } else {
    res.destroy();
  }
});

const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => proxy.web(req, res));

server.listen(Number(process.env.FORWARD_PORT ?? 0), '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  if (process.send) process.send({ type: 'forward.ready', port });
  else console.log(`FORWARD_PORT=${port}`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
