/**
 * End-to-end: a client that reads a stream slowly. While the client applies backpressure the
 * gateway stops reading the provider (undici holds the body), so no provider bytes arrive: that
 * silence is the client's, not the provider's, and must not be answered as "provider timed out
 * mid-response" (it was: the stream ended with an error event after `upstream-timeout`). A client
 * that never reads again is disconnected once it has taken nothing for `server.send-timeout`,
 * which releases the provider (nothing else did: the connection stayed open). A provider that really goes silent mid-stream is reported as a timeout
 * (`upstream_timeout`, 504 in the event), not as a lost connection.
 *
 * Real processes: test/support/hazard-stub.ts as the provider, admin on a fresh PostgreSQL database,
 * and the proxy with `upstream-timeout: 1s`, `send-timeout: 4s`.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { fetchRecord, startStubbedStack, waitFor, type StubbedStack } from './support/stack.ts';

const UPSTREAM_TIMEOUT_MS = 1000;
const SEND_TIMEOUT_MS = 4000;
/** MiB a firehose stream sends: far more than the socket buffers between the proxy and the client hold. */
const FIREHOSE_MIB = 64;

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack('test/support/hazard-stub.ts', (stubUrl) => ({
    providers: { openai: { 'base-url': `${stubUrl}/v1` }, anthropic: { 'base-url': `${stubUrl}/v1` } },
    server: { 'upstream-timeout': `${UPSTREAM_TIMEOUT_MS}ms`, 'send-timeout': `${SEND_TIMEOUT_MS}ms` },
  }));
});
after(async () => {
  await s?.stop();
});

/** What a client read of a stream: its status, request id, byte count, last bytes, whether `end` was seen, and whether the connection broke first. */
interface Read {
  status: number;
  id: string;
  bytes: number;
  tail: string;
  sawEnd: boolean;
  aborted: boolean;
}

/**
 * POSTs `body` to `path`, reads the first piece of the answer, then reads nothing for `pauseMs`
 * (`Infinity`: never again, until the server closes the connection or `giveUpMs` passes). `end`
 * marks the answer's last event (searched across piece boundaries).
 */
function readWithPause(path: string, body: Record<string, unknown>, end: RegExp, pauseMs: number, giveUpMs = 20_000): Promise<Read> {
  return new Promise((resolve, reject) => {
    const url = new URL(path, s.stack.gatewayUrl);
    const req = http.request(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' } }, (res) => {
      const out: Read = { status: res.statusCode!, id: String(res.headers['svc-id']), bytes: 0, tail: '', sawEnd: false, aborted: false };
      let settled = false;
      const done = (aborted: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(giveUp);
        resolve({ ...out, aborted });
      };
      const giveUp = setTimeout(() => {
        out.tail += `<still open after ${giveUpMs} ms>`;
        done(false);
        req.destroy();
      }, giveUpMs);
      res.on('data', (d: Buffer) => {
        if (out.bytes === 0) {
          res.pause();
          if (Number.isFinite(pauseMs)) setTimeout(() => res.resume(), pauseMs);
        }
        out.bytes += d.length;
        const text = out.tail.slice(-256) + d.toString('utf8');
        out.sawEnd ||= end.test(text);
        out.tail = (out.tail + d.toString('utf8')).slice(-8192);
      });
      res.on('end', () => done(false));
      // A paused response reports nothing of its connection: watch the socket itself.
      res.socket.on('close', () => done(!res.complete));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const STREAMS = [
  { name: 'chat completions passed through (OpenAI)', path: '/ai/chat/completions', body: { model: `openai/firehose:${FIREHOSE_MIB}`, stream: true, messages: [{ role: 'user', content: 'x' }] }, end: /data: \[DONE\]\n\n$/ },
  { name: 'Messages translated to OpenAI chat', path: '/v1/messages', body: { model: `openai/firehose:${FIREHOSE_MIB}`, stream: true, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }, end: /event: message_stop\n/ },
  { name: 'Responses translated to Anthropic', path: '/v1/responses', body: { model: `anthropic/firehose:${FIREHOSE_MIB}`, stream: true, input: 'x' }, end: /event: response\.completed\n/ },
] as const;

describe('a client that pauses reading longer than upstream-timeout', () => {
  for (const c of STREAMS) {
    test(`${c.name}: the stream completes once the client reads again; no timeout, logged 200 without error`, async () => {
      const read = await readWithPause(c.path, c.body, c.end, 2.5 * UPSTREAM_TIMEOUT_MS);
      assert.equal(read.status, 200);
      assert.equal(read.aborted, false, 'the stream ended normally');
      assert.doesNotMatch(read.tail, /timed out|upstream_disconnected|upstream_timeout|event: error/, read.tail.slice(-600));
      assert.ok(read.sawEnd, read.tail.slice(-600));
      assert.ok(read.bytes > FIREHOSE_MIB * 1024 * 1024 * 0.9, `read ${read.bytes} bytes`);
      const rec = await fetchRecord(s.stack, read.id);
      assert.equal(rec.response_status, 200);
      assert.equal(rec.llmSchema.response.error ?? null, null, JSON.stringify(rec.llmSchema.response.error));
    });
  }
});

/**
 * POSTs `body` to `path`, reads the first piece of the answer and never reads again.
 * @returns the request id, and `close` to drop the connection. (The client cannot see the server
 * close it: an unread socket never reads the end of the connection.)
 */
function neverReadAgain(path: string, body: Record<string, unknown>): Promise<{ id: string; close: () => void }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, s.stack.gatewayUrl), { method: 'POST', agent: false, headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' } }, (res) => {
      res.once('data', () => {
        res.pause();
        resolve({ id: String(res.headers['svc-id']), close: () => req.destroy() });
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('a client that never reads again', () => {
  test('is disconnected once it has read nothing for send-timeout; the provider is released; logged as the client stalling', async () => {
    await fetch(`${s.stubUrl}/__responses`, { method: 'DELETE' });
    const t0 = Date.now();
    const client = await neverReadAgain('/ai/chat/completions', STREAMS[0].body);
    try {
      // The record is written once the request is over: when the gateway gave up on the client.
      const rec = await fetchRecord(s.stack, client.id, SEND_TIMEOUT_MS + 10_000);
      const ms = Date.now() - t0;
      assert.ok(ms >= SEND_TIMEOUT_MS, `the gateway gave up after ${ms} ms`);
      assert.equal(rec.response_status, 499);
      assert.match(JSON.stringify(rec.llmSchema.response.error), /client read none of its answer for 4000 ms \(server.send-timeout\)/);
      await waitFor(async () => ((await (await fetch(`${s.stubUrl}/__responses`)).json()) as Array<{ closedAt: number | null }>)[0]?.closedAt != null, 5000);
      const [answer] = (await (await fetch(`${s.stubUrl}/__responses`)).json()) as Array<{ written: number; finished: boolean }>;
      assert.equal(answer!.finished, false, 'the provider was stopped, not read to its end');
      const health = (await (await fetch(`${s.stack.gatewayUrl}/health`)).json()) as Record<string, unknown>;
      assert.equal(health.status, 'ok');
    } finally {
      client.close();
    }
  });
});

describe('a provider that goes silent mid-stream', () => {
  test('chat completions passed through: the error event says upstream_timeout', async () => {
    const res = await fetch(`${s.stack.gatewayUrl}/ai/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/hang-mid-stream', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const text = await res.text();
    const last = JSON.parse(text.trim().split('\n\n').at(-1)!.replace(/^data: /, ''));
    assert.equal(last.error.code, 'upstream_timeout', text);
    assert.match(last.error.message, /timed out mid-response/);
    const rec = await fetchRecord(s.stack, res.headers.get('svc-id')!);
    assert.match(JSON.stringify(rec.llmSchema.response.error), /timed out mid-response/);
  });

  test('Messages translated: the error event is a timeout_error (504), not an api_error', async () => {
    const res = await fetch(`${s.stack.gatewayUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/hang-mid-stream', stream: true, max_tokens: 16, messages: [{ role: 'user', content: 'x' }] }),
    });
    const text = await res.text();
    const m = /event: error\ndata: (.*)\n/.exec(text);
    assert.ok(m, text);
    assert.equal(JSON.parse(m[1]!).error.type, 'timeout_error', text);
  });
});
