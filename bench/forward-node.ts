/**
 * Bench baseline (b): the least a correct Node reverse proxy does, with nothing of the gateway's
 * work — `http.request` to the upstream over a keep-alive Agent, hop-by-hop headers dropped, the
 * request body piped up and the response piped back. Run as its own process by bench/run.ts.
 *
 * Env: `FORWARD_TARGET` (upstream origin, e.g. `http://127.0.0.1:9000`), `FORWARD_PORT` (0 = any;
 * the chosen port is sent over IPC as `{type: 'forward.ready', port}`).
 */
import http from 'node:http';

const target = new URL(process.env.FORWARD_TARGET ?? 'http://127.0.0.1:9000');
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256, scheduling: 'lifo' });
// RFC 9110 §7.6.1: connection-specific fields are not forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function strip(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const k in headers) if (!HOP_BY_HOP.has(k)) out[k] = headers[k];
  return out;
}

const server = http.createServer({ keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
  const up = http.request(
    { protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers: strip(req.headers), agent },
    (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, strip(upRes.headers));
      upRes.pipe(res);
      upRes.on('aborted', () => res.destroy());
    },
  );
  up.on('error', () => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end();
  });
  res.on('close', () => {
    if (!res.writableFinished) up.destroy();
  });
  req.pipe(up);
});

server.listen(Number(process.env.FORWARD_PORT ?? 0), '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  if (process.send) process.send({ type: 'forward.ready', port });
  else console.log(`FORWARD_PORT=${port}`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('disconnect', () => process.exit(0));
