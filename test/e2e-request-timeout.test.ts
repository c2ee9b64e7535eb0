/**
 * End-to-end: `server.request-timeout`, the bound on receiving a whole request. A body that drips
 * a byte at a time, each within `server.headers-timeout` (the idle bound), used to hold its
 * connection for as long as the client liked (slow loris); it is now answered 408
 * `request_timeout` in the caller's error shape once the request has taken longer than the bound
 * to arrive. The bound covers the request only: an answer streamed for longer goes on.
 *
 * Real processes: stub upstream (test/support/stub-upstream.ts: `endless-stream`), admin on a
 * fresh PostgreSQL database, and the proxy.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, afterEach, before, test } from 'node:test';
import { buildConfig, ConfigError } from '../shared/config.ts';
import { defaultConfig, startStack, type Stack } from './support/stack.ts';

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2500;
/** Node checks its connections' timers every headers-timeout / 4: the answer may come that much later. */
const SLACK_MS = 2000;

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({
      ...defaultConfig(stubUrl),
      server: { 'headers-timeout': `${HEADERS_TIMEOUT_MS}ms`, 'request-timeout': `${REQUEST_TIMEOUT_MS}ms` },
    }),
  });
});
after(async () => {
  await stack?.stop();
});
afterEach(async () => {
  assert.equal(stack.proxy.child.exitCode, null, `the proxy exited:\n${stack.proxy.output()}`);
  assert.equal((await fetch(`${stack.gatewayUrl}/health`)).status, 200);
});

/**
 * Sends `head` on a fresh socket, then one byte of body every `everyMs` (under the headers
 * timeout, so the idle bound never fires) until the server answers or closes, or `giveUpMs` passes.
 */
function dripBody(head: string, everyMs: number, giveUpMs: number): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const socket = net.connect(stack.proxy.port, '127.0.0.1');
    socket.setNoDelay(true);
    let text = '';
    const drip = setInterval(() => {
      if (!socket.destroyed) socket.write('a');
    }, everyMs);
    const done = (closed: boolean) => {
      clearInterval(drip);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ text, closed, ms: Date.now() - t0 });
    };
    const giveUp = setTimeout(() => done(false), giveUpMs);
    socket.on('connect', () => socket.write(head));
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', () => {});
    socket.on('close', () => done(true));
  });
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
const bodyOf = (text: string): any => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));

function slowHead(path: string, model: string): string {
  return (
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\n` +
    `Content-Length: 100000\r\n\r\n{"model":"${model}","max_tokens":16,"messages":[{"role":"user","content":"`
  );
}

test(`a body dripping a byte every ${HEADERS_TIMEOUT_MS / 2} ms → 408 request_timeout once server.request-timeout (${REQUEST_TIMEOUT_MS} ms) passed, connection closed`, async () => {
  const r = await dripBody(slowHead('/ai/chat/completions', 'openai/gpt-4o-mini'), HEADERS_TIMEOUT_MS / 2, REQUEST_TIMEOUT_MS + 3 * SLACK_MS);
  assert.equal(statusOf(r.text), 408, `after ${r.ms} ms: ${r.text || '(nothing answered)'}`);
  assert.ok(r.closed, 'the connection is closed');
  // No upper bound: under load the answer may come late; the 408 and its message prove the point.
  assert.ok(r.ms >= REQUEST_TIMEOUT_MS - 50, `answered after ${r.ms} ms`);
  const body = bodyOf(r.text);
  assert.equal(body.error.code, 'request_timeout', r.text);
  assert.match(body.error.message, /server\.request-timeout/);
});

test('the same on the Messages API → 408 in Anthropic\'s error shape', async () => {
  const r = await dripBody(slowHead('/v1/messages', 'anthropic/claude-sonnet-4-5'), HEADERS_TIMEOUT_MS / 2, REQUEST_TIMEOUT_MS + 3 * SLACK_MS);
  assert.equal(statusOf(r.text), 408, `after ${r.ms} ms: ${r.text || '(nothing answered)'}`);
  const body = bodyOf(r.text);
  assert.equal(body.type, 'error', r.text);
  assert.equal(typeof body.error.type, 'string', r.text);
});

/** The HTTP/1.1 answers in `text`, in order (each with a content-length, as the gateway's JSON answers have). */
function answersOf(text: string): Array<{ status: number; head: string; body: string }> {
  const out: Array<{ status: number; head: string; body: string }> = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = text.slice(at, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
    if (!Number.isFinite(length)) throw new Error(`an answer without content-length: ${head}`);
    out.push({ status: statusOf(head), head, body: Buffer.from(text.slice(end + 4), 'latin1').subarray(0, length).toString('latin1') });
    at = end + 4 + length;
  }
  return out;
}

/** A complete request for `path`, with its body's length. */
function wholeRequest(path: string, body: unknown): string {
  const json = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
}

// Pipelined on one connection: a complete request whose provider answers after the bound, then a
// request whose body drips. The timeout is the second request's; the first is answered as usual,
// then the second's 408 in its dialect, and the connection closes.
const PROVIDER_DELAY_MS = REQUEST_TIMEOUT_MS + SLACK_MS;
const pipelined = [
  { dialect: 'chat completions', path: '/ai/chat/completions', first: { model: `openai/delay-${PROVIDER_DELAY_MS}`, messages: [{ role: 'user', content: 'x' }] }, second: 'openai/gpt-4o-mini' },
  { dialect: 'Messages', path: '/v1/messages', first: { model: `anthropic/delay-${PROVIDER_DELAY_MS}`, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }, second: 'anthropic/claude-sonnet-4-5' },
];
for (const p of pipelined) {
  test(`${p.dialect}, pipelined: a complete request waiting on its provider is answered; the one behind it, dripping its body, gets the 408 in its dialect`, async () => {
    const r = await dripBody(wholeRequest(p.path, p.first) + slowHead(p.path, p.second), HEADERS_TIMEOUT_MS / 2, PROVIDER_DELAY_MS + 4 * SLACK_MS);
    const answers = answersOf(r.text);
    assert.equal(answers.length, 2, `after ${r.ms} ms: ${r.text || '(nothing answered)'}`);
    const [first, second] = answers as [(typeof answers)[0], (typeof answers)[0]];
    assert.equal(first.status, 200, first.head + first.body);
    assert.ok(JSON.parse(first.body).id, first.body);
    assert.equal(second.status, 408, second.head + second.body);
    const body = JSON.parse(second.body);
    if (p.dialect === 'Messages') {
      assert.equal(body.type, 'error', second.body);
      assert.equal(typeof body.error.type, 'string', second.body);
    } else assert.equal(body.error.code, 'request_timeout', second.body);
    assert.match(body.error.message, /server\.request-timeout/);
    assert.ok(r.closed, 'the connection is closed');
  });
}

test('pipelined: a complete request waiting on its provider keeps its answer when the next request\'s headers are too slow', async () => {
  // The timeout is the second request's headers (no context yet): a raw 408 written at once went out
  // ahead of the first request's answer, which was then lost. The first is answered and the
  // connection closes after it.
  const first = { model: `openai/delay-${PROVIDER_DELAY_MS}`, messages: [{ role: 'user', content: 'x' }] };
  const r = await dripBody(wholeRequest('/ai/chat/completions', first) + 'POST /ai/chat/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ', HEADERS_TIMEOUT_MS / 2, PROVIDER_DELAY_MS + 4 * SLACK_MS);
  const answers = answersOf(r.text);
  assert.ok(answers.length >= 1, `after ${r.ms} ms: ${r.text || '(nothing answered)'}`);
  assert.equal(answers[0]!.status, 200, r.text);
  assert.ok(JSON.parse(answers[0]!.body).id, r.text);
  assert.equal(answers.length, 1, `nothing after the first answer: ${r.text}`);
  assert.ok(r.closed, 'the connection is closed');
});

test(`a body that arrives slowly but whole within the bound is answered`, async () => {
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = http.request(`${stack.gatewayUrl}/ai/chat/completions`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' } }, (r) => {
      let body = '';
      r.on('data', (d: Buffer) => (body += d.toString()));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.write('{"model":"openai/gpt-4o-mini",');
    setTimeout(() => req.end('"messages":[{"role":"user","content":"x"}]}'), HEADERS_TIMEOUT_MS / 2);
  });
  assert.equal(res.status, 200, res.body);
});

test(`a stream answered for longer than server.request-timeout is not cut by it`, async () => {
  const seen: number[] = [];
  const t0 = Date.now();
  const outcome = await new Promise<string>((resolve) => {
    const req = http.request(`${stack.gatewayUrl}/ai/chat/completions`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' } }, (res) => {
      assert.equal(res.statusCode, 200);
      res.on('data', () => {
        seen.push(Date.now() - t0);
        if (Date.now() - t0 > REQUEST_TIMEOUT_MS + SLACK_MS) {
          req.destroy();
          resolve('still streaming');
        }
      });
      res.on('end', () => resolve('ended'));
      res.on('error', () => resolve('broken'));
      res.on('aborted', () => resolve('broken'));
    });
    req.on('error', () => resolve('broken'));
    req.end(JSON.stringify({ model: 'openai/endless-stream', stream: true, messages: [{ role: 'user', content: 'request-timeout stream' }] }));
  });
  assert.equal(outcome, 'still streaming', `chunks seen until ${seen.at(-1)} ms`);
});

test('server.request-timeout: 300 s by default (never below headers-timeout); one set below headers-timeout stops the start', () => {
  assert.equal(buildConfig({}, {}).server.requestTimeoutMs, 300_000);
  assert.equal(buildConfig({ server: { 'headers-timeout': '10m' } }, {}).server.requestTimeoutMs, 600_000);
  assert.equal(buildConfig({ server: { 'request-timeout': '1m' } }, {}).server.requestTimeoutMs, 60_000);
  assert.throws(
    () => buildConfig({ server: { 'headers-timeout': '20s', 'request-timeout': '10s' } }, {}),
    (e: unknown) => e instanceof ConfigError && /server\.request-timeout: .*below server\.headers-timeout/.test(e.message),
  );
});
