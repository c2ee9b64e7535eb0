/**
 * The proxy's upstream exchange (proxy/upstream/exchange.ts) is an undici handler of undici's first
 * interface (`onConnect`, `onHeaders`, `onData`, `onComplete`, `onError`). These tests pin how the
 * undici in the lock file calls it, so a release that changes or drops that interface fails here:
 * raw headers as Buffers in the order and case sent, a body held while `onData` returns false until
 * `resume`, and the abort handed to `onConnect` ending the request with `onError`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { Agent } from '../proxy/upstream-agent.ts';

let server: http.Server;
let origin: string;
const agent = new Agent({ connections: null });

before(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/slow') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('one');
      setTimeout(() => res.end('two'), 50);
      return;
    }
    if (req.url === '/hang') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('start');
      return;
    }
    res.writeHead(201, [
      ['X-Request-Id', 'abc'],
      ['set-cookie', 'a=1'],
      ['Set-Cookie', 'b=2'],
      ['content-type', 'application/json'],
    ]);
    res.end('{}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
after(async () => {
  await agent.close();
  server.closeAllConnections();
  server.close();
});

/** A handler of undici's first interface that records every call. */
function recorder(onDataResult: (n: number) => boolean = () => true) {
  const calls: string[] = [];
  let raw: Buffer[] = [];
  let resume: (() => void) | null = null;
  let abort: ((err?: Error) => void) | null = null;
  let chunks = 0;
  let done: (value: string) => void;
  const ended = new Promise<string>((r) => (done = r));
  const handler = {
    onConnect(a: (err?: Error) => void) {
      abort = a;
      calls.push('connect');
    },
    onHeaders(status: number, headers: Buffer[], r: () => void) {
      raw = headers;
      resume = r;
      calls.push(`headers ${status}`);
      return true;
    },
    onData(chunk: Buffer) {
      calls.push(`data ${chunk.toString()}`);
      return onDataResult(++chunks);
    },
    onComplete() {
      calls.push('complete');
      done('complete');
    },
    onError(err: Error) {
      calls.push(`error ${err.message}`);
      done('error');
    },
  };
  return { handler, calls, ended, raw: () => raw, resume: () => resume!(), abort: (err: Error) => abort!(err) };
}

test('undici calls onConnect, onHeaders with the raw headers as sent, onData, onComplete', async () => {
  const r = recorder();
  agent.dispatch({ origin, path: '/', method: 'GET' }, r.handler as never);
  assert.equal(await r.ended, 'complete');
  assert.deepEqual(r.calls, ['connect', 'headers 201', 'data {}', 'complete']);
  const raw = r.raw();
  assert.ok(raw.every((b) => Buffer.isBuffer(b)), 'Buffers, not strings');
  const names = raw.filter((_, i) => i % 2 === 0).map(String);
  assert.deepEqual(names.slice(0, 4), ['X-Request-Id', 'set-cookie', 'Set-Cookie', 'content-type'], 'in the order and case sent, repeats kept');
});

test('onData returning false holds the body until resume', async () => {
  const r = recorder((n) => n > 1);
  agent.dispatch({ origin, path: '/slow', method: 'GET' }, r.handler as never);
  await new Promise((res) => setTimeout(res, 200));
  assert.deepEqual(r.calls, ['connect', 'headers 200', 'data one'], 'held after the first piece');
  r.resume();
  assert.equal(await r.ended, 'complete');
  assert.deepEqual(r.calls.slice(3), ['data two', 'complete']);
});

test('the abort given to onConnect ends the request with onError', async () => {
  const r = recorder((n) => {
    if (n === 1) setImmediate(() => r.abort(new Error('client left')));
    return true;
  });
  agent.dispatch({ origin, path: '/hang', method: 'GET' }, r.handler as never);
  assert.equal(await r.ended, 'error');
  assert.deepEqual(r.calls, ['connect', 'headers 200', 'data start', 'error client left']);
});
