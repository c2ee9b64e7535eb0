/**
 * End-to-end: hostile input. Every case must get a 4xx (never a 5xx, a hang or a crash), and the
 * proxy must stay up afterwards (`GET /health` after each case). Stub upstream, admin (real
 * PostgreSQL) and proxy run as separate processes; raw sockets send what `fetch` refuses to.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, waitFor, type Stack } from './support/stack.ts';

const MAX_BODY = 1024 * 1024;
const HEADERS_TIMEOUT_MS = 1000;
/**
 * An answer later than this is the connection held until the server's 65 s keep-alive timeout (the bug the
 * timeouts prevent); well past any timeout the tests set, so a loaded machine does not fail them.
 */
const HANG_BOUND_MS = 30_000;

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({
      ...defaultConfig(stubUrl),
      server: { 'max-body-size': MAX_BODY, 'headers-timeout': `${HEADERS_TIMEOUT_MS}ms`, 'upstream-timeout': '5s' },
    }),
  });
});
after(async () => {
  await stack?.stop();
});
afterEach(async () => {
  // The process stays up after every hostile case.
  assert.equal(stack.proxy.child.exitCode, null, `the proxy exited:\n${stack.proxy.output()}`);
  const res = await fetch(`${stack.gatewayUrl}/health`);
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { status: string }).status, 'ok');
});

const CHAT = '/ai/chat/completions';

function post(body: string | Uint8Array, headers: Record<string, string> = {}, path = CHAT): Promise<Response> {
  return fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: body as unknown as BodyInit,
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json', ...headers },
  });
}

/** Sends raw bytes on a fresh socket; resolves with everything the server sent until it closed (or `timeoutMs`). */
function raw(port: number, payload: string | Buffer, timeoutMs = 10_000): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false, ms: Date.now() - started });
    }, timeoutMs);
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', (err) => {
      if ((err as { code?: string }).code === 'ECONNRESET' && text) return;
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true, ms: Date.now() - started });
    });
  });
}

const statusOf = (text: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);

async function expect4xx(res: Response, code?: string): Promise<any> {
  const text = await res.text();
  assert.ok(res.status >= 400 && res.status < 500, `expected a 4xx, got ${res.status}: ${text.slice(0, 300)}`);
  const json = JSON.parse(text);
  assert.equal(typeof json.error.message, 'string');
  if (code) assert.equal(json.error.code, code, text.slice(0, 300));
  return json;
}

describe('malformed and mistyped bodies', () => {
  const malformed: Array<[string, string | Uint8Array, string]> = [
    ['truncated JSON', '{"model":', 'invalid_json'],
    ['empty body', '', 'invalid_json'],
    ['trailing garbage', '{"model":"openai/gpt-4o-mini","messages":[]} x', 'invalid_json'],
    ['a JSON null', 'null', 'invalid_body'],
    ['a JSON array', '[{"model":"openai/gpt-4o-mini"}]', 'invalid_body'],
    ['a JSON string', '"hello"', 'invalid_body'],
    ['NUL bytes', new Uint8Array([0x7b, 0x00, 0x00, 0x7d]), 'invalid_json'],
  ];
  for (const [name, body, code] of malformed) {
    test(`${name} → 400 ${code}`, async () => {
      const json = await expect4xx(await post(body), code);
      assert.equal(json.error.type, 'invalid_request_error');
    });
  }

  const base = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  const wrongTypes: Array<[string, Record<string, unknown>]> = [
    ['model is a number', { ...base, model: 5 }],
    ['model is empty', { ...base, model: '' }],
    ['messages is an object', { ...base, messages: { role: 'user' } }],
    ['a message is null', { ...base, messages: [null] }],
    ['a role is a number', { ...base, messages: [{ role: 1, content: 'x' }] }],
    ['content is a number', { ...base, messages: [{ role: 'user', content: 5 }] }],
    ['a content part is a string', { ...base, messages: [{ role: 'user', content: ['x'] }] }],
    ['stream is a string', { ...base, stream: 'yes' }],
    ['tools is a string', { ...base, tools: 'get_weather' }],
    ['a tool is null', { ...base, tools: [null] }],
    ['max_tokens is a string', { ...base, max_tokens: 'many' }],
    ['temperature is an object', { ...base, temperature: {} }],
    ['n is a string', { ...base, n: 'two' }],
    ['stop is a number', { ...base, stop: 3 }],
    ['stream_options is a string', { ...base, stream_options: 'usage' }],
    ['tool_choice is a number', { ...base, tool_choice: 1 }],
  ];
  for (const provider of ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5']) {
    for (const [name, body] of wrongTypes) {
      test(`${provider}: ${name} → 400`, async () => {
        const b = body.model === base.model ? { ...body, model: provider } : body;
        assert.equal((await post(JSON.stringify(b))).status, 400);
      });
    }
  }

  test('embeddings: input of a wrong type → 400', async () => {
    await expect4xx(await post(JSON.stringify({ model: 'openai/text-embedding-3-small', input: 5 }), {}, '/ai/embeddings'));
    await expect4xx(await post(JSON.stringify({ model: 'openai/text-embedding-3-small', input: [{}] }), {}, '/ai/embeddings'));
  });
});

describe('oversized and slow requests', () => {
  /**
   * Streams `total` bytes of a JSON-looking body; resolves with the status and how many bytes had
   * been written when the response arrived.
   */
  function streamBody(total: number, declareLength: boolean): Promise<{ status: number; sentAtResponse: number; body: string }> {
    return new Promise((resolve, reject) => {
      let sent = 0;
      let done = false;
      const headers: Record<string, string | number> = { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' };
      if (declareLength) headers['content-length'] = total;
      const req = http.request({ host: '127.0.0.1', port: stack.proxy.port, path: CHAT, method: 'POST', headers, agent: false }, (res) => {
        const sentAtResponse = sent;
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          done = true;
          req.destroy();
          resolve({ status: res.statusCode ?? 0, sentAtResponse, body });
        });
      });
      req.on('error', (err) => {
        if (!done) reject(err);
      });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      req.write('{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"');
      const pump = () => {
        while (!done && sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', pump);
        }
        if (!done) req.end('"}]}');
      };
      pump();
    });
  }

  test('a 100 MB body with Content-Length → 413 before the client finished sending', async () => {
    const total = 100 * 1024 * 1024;
    const r = await streamBody(total, true);
    assert.equal(r.status, 413);
    assert.equal(JSON.parse(r.body).error.code, 'request_too_large');
    assert.ok(r.sentAtResponse < total, `the answer came after ${r.sentAtResponse} of ${total} bytes`);
  });

  test('a 100 MB chunked body (no Content-Length) → 413 before the client finished sending', async () => {
    const total = 100 * 1024 * 1024;
    const r = await streamBody(total, false);
    assert.equal(r.status, 413);
    assert.ok(r.sentAtResponse < total, `the answer came after ${r.sentAtResponse} of ${total} bytes`);
  });

  test(`slow headers → 408 after server.headers-timeout (${HEADERS_TIMEOUT_MS} ms)`, async () => {
    const r = await raw(stack.proxy.port, `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.apiKey}\r\n`, HANG_BOUND_MS);
    assert.equal(statusOf(r.text), 408, r.text);
    assert.ok(r.closed, 'the connection is closed');
    // The upper bound only tells the headers timeout from a connection held until the 65 s keep-alive timeout.
    assert.ok(r.ms >= HEADERS_TIMEOUT_MS - 50 && r.ms < HANG_BOUND_MS, `answered after ${r.ms} ms`);
  });

  test('a body that stalls → 408 (no connection held forever)', async () => {
    const head = `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model":`;
    const r = await raw(stack.proxy.port, head, HANG_BOUND_MS);
    assert.equal(statusOf(r.text), 408, r.text);
    // Only to tell the 408 from a connection held until the 65 s keep-alive timeout.
    assert.ok(r.ms < HANG_BOUND_MS, `answered after ${r.ms} ms`);
  });

  test('headers over the size limit → 431', async () => {
    const r = await raw(stack.proxy.port, `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nSvc-Property-Big: ${'x'.repeat(64 * 1024)}\r\n\r\n`);
    assert.equal(statusOf(r.text), 431, r.text.slice(0, 200));
  });
});

describe('header injection', () => {
  const body = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  const request = (propertyLine: string) =>
    `POST ${CHAT} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${stack.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n${propertyLine}\r\n\r\n${body}`;

  const cases: Array<[string, string]> = [
    ['bare CR', 'Svc-Property-Env: prod\rX-Injected: 1'],
    ['bare LF', 'Svc-Property-Env: prod\nX-Injected: 1'],
    ['obs-fold continuation', 'Svc-Property-Env: prod\r\n X-Injected: 1'],
    ['NUL byte', 'Svc-Property-Env: pr\x00od'],
    ['other control byte', 'Svc-Property-Env: pr\x01od'],
    ['CR/LF in the name', 'Svc-Property-E\rnv: prod'],
  ];
  for (const [name, line] of cases) {
    test(`${name} in a Svc-Property header → 400 (raw socket)`, async () => {
      const r = await raw(stack.proxy.port, request(line));
      assert.equal(statusOf(r.text), 400, r.text.slice(0, 300));
    });
  }

  test('a well-formed property is stored as sent', async () => {
    const r = await raw(stack.proxy.port, request('Svc-Property-Env: prod\tblue'));
    assert.equal(statusOf(r.text), 200, r.text.slice(0, 300));
    const id = /svc-id: ([0-9a-f-]{36})/i.exec(r.text)![1]!;
    const rec = await fetchRecord(stack, id);
    assert.equal(rec.request_properties.env, 'prod\tblue');
    assert.deepEqual(Object.keys(rec.request_properties).filter((k) => !k.startsWith('svc-')), ['env'], 'nothing injected');
  });
});

describe('pathological JSON', () => {
  test('10,000 messages: answered without a 5xx, and logged', async () => {
    const messages = Array.from({ length: 10_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }));
    const res = await post(JSON.stringify({ model: 'openai/gpt-4o-mini', messages }));
    const text = await res.text();
    assert.ok(res.status < 500, `${res.status}: ${text.slice(0, 300)}`);
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.equal(rec.llmSchema.request.messages.length, 10_000);
  });

  test('10,000 messages with a token-limit handler: answered without a 5xx', async () => {
    const messages = Array.from({ length: 10_000 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}` }));
    const res = await post(JSON.stringify({ model: 'openai/gpt-4o-mini', messages }), { 'svc-token-limit-exception-handler': 'truncate' });
    const text = await res.text();
    assert.ok(res.status < 500, `${res.status}: ${text.slice(0, 300)}`);
  });

  test('JSON nested 10,000 deep → 400', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    await expect4xx(await post(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":${deep}}`), 'too_deep');
    await expect4xx(await post(`{"model":"openai/gpt-4o-mini","messages":${deep}}`), 'too_deep');
    const objects = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    await expect4xx(await post(`{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"x"}],"metadata":${objects}}`), 'too_deep');
  });

  test('brackets inside strings do not count as nesting', async () => {
    const res = await post(JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: '['.repeat(10_000) + '\\"{' }] }));
    assert.equal(res.status, 200, await res.text());
  });

  test('invalid UTF-8 → 400', async () => {
    const prefix = Buffer.from('{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"');
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      const body = Buffer.concat([prefix, Buffer.from(bad), Buffer.from('"}]}')]);
      await expect4xx(await post(body), 'invalid_encoding');
    }
  });

  test('a NUL and a lone surrogate in the content: answered, and the record is still stored', async () => {
    const res = await post('{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"nul \\u0000 lone \\ud800 end"}],"user":"u\\u0000"}');
    assert.equal(res.status, 200, await res.text());
    const rec = await fetchRecord(stack, res.headers.get('svc-id')!);
    assert.match(rec.llmSchema.request.messages[0].content, /^nul .* lone .* end$/);
    // Nothing stuck behind it: the proxy's queue drains.
    await waitFor(async () => {
      const h = (await (await fetch(`${stack.gatewayUrl}/health`)).json()) as { logQueue: { queued: number; inFlight: number } };
      return h.logQueue.queued === 0 && h.logQueue.inFlight === 0;
    });
  });
});

describe('admin REST API', () => {
  const adminPost = (path: string, body: string | Uint8Array) =>
    fetch(`${stack.adminUrl}${path}`, { method: 'POST', body: body as unknown as BodyInit, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' } });

  test('malformed, mistyped, deep, non-UTF-8 and oversized filter bodies → 4xx', async () => {
    const deep = '{"left":'.repeat(10_000) + '"all"' + ',"operator":"and","right":"all"}'.repeat(10_000);
    const bodies: Array<string | Uint8Array> = [
      '{"filter":',
      '[]',
      '{"filter":5}',
      '{"filter":{"request":{"model":{"equals":5}}}}',
      `{"filter":${deep}}`,
      JSON.stringify({ filter: 'all', pad: 'x'.repeat(2 * 1024 * 1024) }),
    ];
    for (const body of bodies) {
      const res = await adminPost('/v1/request/query', body);
      const text = await res.text();
      assert.ok(res.status >= 400 && res.status < 500, `${res.status}: ${text.slice(0, 200)}`);
    }
    // Admin decodes bodies leniently (invalid bytes become U+FFFD): not a 4xx there, but never a 5xx.
    const nonUtf8 = await adminPost('/v1/request/query', Buffer.concat([Buffer.from('{"filter":{"request":{"model":{"equals":"'), Buffer.from([0xff]), Buffer.from('"}}}}')]));
    assert.ok(nonUtf8.status < 500, `${nonUtf8.status}: ${await nonUtf8.text()}`);
    const health = await fetch(`${stack.adminUrl}/health`);
    assert.equal(health.status, 200);
  });
});

describe('admin REST API: regressions found by test/fuzz.test.ts', () => {
  test('a value whose "toString" member is not a function → 400, not 500', async () => {
    for (const body of ['{"filter":"all","limit":{"toString":0}}', '{"filter":"all","offset":{"valueOf":"x","toString":[]}}']) {
      const res = await fetch(`${stack.adminUrl}/v1/request/query`, { method: 'POST', body, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' } });
      const text = await res.text();
      assert.equal(res.status, 400, `${body} → ${res.status}: ${text}`);
    }
  });

  test('a logged request body with odd message members (tool_calls: [null]) is readable over REST', async () => {
    const res = await post(
      JSON.stringify({ model: 'openai/text-embedding-3-small', input: 'x', messages: [{ role: 'assistant', content: null, tool_calls: [null, 5, { function: null }] }, null, 'x'] }),
      {},
      '/ai/embeddings',
    );
    assert.equal(res.status, 200, await res.text());
    const id = res.headers.get('svc-id')!;
    await waitFor(async () => (await stack.db.sql`select 1 from request_log where id = ${id}`).length === 1);
    const one = await fetch(`${stack.adminUrl}/v1/request/${id}`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
    assert.equal(one.status, 200, await one.text());
    const query = await fetch(`${stack.adminUrl}/v1/request/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: { request: { id: { equals: id } } } }),
    });
    assert.equal(query.status, 200, await query.text());
  });
});
