/**
 * End-to-end: a provider that encodes its answer (`content-encoding: gzip`, `br`, `deflate`) although
 * the gateway asked for `accept-encoding: identity`. Where the gateway reads the answer itself it
 * decodes it: a translated answer (JSON, stream, mapped error) reaches the client decoded (it was a
 * 502 upstream_bad_response, or a stream that "ended before complete"), and the log's copy of a
 * passed-through answer is decoded (it stored the compressed bytes: no body, no usage), while the
 * passed-through bytes reach the client exactly as the provider sent them, with their header.
 *
 * Real processes: test/support/hazard-stub.ts as the provider, admin on a fresh PostgreSQL database,
 * and the proxy.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { fetchRecord, startStubbedStack, waitFor, type StubbedStack } from './support/stack.ts';

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack('test/support/hazard-stub.ts', (stubUrl) => ({
    providers: { openai: { 'base-url': `${stubUrl}/v1` }, anthropic: { 'base-url': `${stubUrl}/v1` }, azure: { 'base-url': stubUrl } },
  }), { AZURE_OPENAI_API_KEY: 'azure-provider-secret' });
});
after(async () => {
  await s?.stop();
});

/** POSTs `body` to `path`; the status, headers and body bytes exactly as sent (no decoding by the client). */
function postRaw(path: string, body: Record<string, unknown>): Promise<{ status: number; headers: http.IncomingHttpHeaders; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, s.stack.gatewayUrl), { method: 'POST', agent: false, headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(parts) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const ENCODINGS = ['gzip', 'br', 'deflate'] as const;
const messages = (model: string, stream = false): Record<string, unknown> => ({ model, max_tokens: 16, stream, messages: [{ role: 'user', content: 'x' }] });

describe('a translated answer the provider encoded is decoded', () => {
  for (const enc of ENCODINGS) {
    test(`Messages → OpenAI chat, ${enc}, JSON: the translated message, unencoded`, async () => {
      const out = await postRaw('/v1/messages', messages(`openai/${enc}`));
      assert.equal(out.status, 200, out.bytes.toString());
      assert.equal(out.headers['content-encoding'], undefined);
      const msg = JSON.parse(out.bytes.toString('utf8'));
      assert.equal(msg.content[0].text, 'The capital of France is Paris.');
      assert.equal(msg.usage.input_tokens, 24);
    });

    test(`Messages → OpenAI chat, ${enc}, stream: the translated stream, complete`, async () => {
      const out = await postRaw('/v1/messages', messages(`openai/${enc}`, true));
      assert.equal(out.status, 200);
      assert.equal(out.headers['content-encoding'], undefined);
      const text = out.bytes.toString('utf8');
      assert.doesNotMatch(text, /event: error/, text);
      assert.match(text, /event: message_stop/, text);
      assert.match(text, /"text_delta"/);
    });
  }

  test('chat → Anthropic, gzip, JSON: the translated chat completion', async () => {
    const out = await postRaw('/ai/chat/completions', { model: 'anthropic/gzip', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(out.status, 200, out.bytes.toString());
    assert.equal(JSON.parse(out.bytes.toString('utf8')).object, 'chat.completion');
  });

  test('Messages → OpenAI chat: a gzip-encoded 429 is mapped into Anthropic’s error shape', async () => {
    const out = await postRaw('/v1/messages', messages('openai/gzip-error'));
    assert.equal(out.status, 429);
    const err = JSON.parse(out.bytes.toString('utf8'));
    assert.equal(err.type, 'error');
    assert.equal(err.error.type, 'rate_limit_error');
    assert.match(err.error.message, /Rate limit/i);
  });

  test('Messages → OpenAI chat: bytes that are not what content-encoding says → 502 upstream_bad_response naming the coding, logged', async () => {
    const out = await postRaw('/v1/messages', messages('openai/gzip-bad'));
    assert.equal(out.status, 502);
    const err = JSON.parse(out.bytes.toString('utf8'));
    assert.match(err.error.message, /content-encoding gzip that does not decode/);
    const rec = await fetchRecord(s.stack, String(out.headers['svc-id']));
    assert.equal(rec.response_status, 502);
  });
});

describe('a translated answer in a coding the gateway cannot read', () => {
  for (const stream of [false, true]) {
    test(`Messages → OpenAI chat, content-encoding: compress, ${stream ? 'stream' : 'JSON'}: 502 upstream_bad_response naming it, before any 200`, async () => {
      const out = await postRaw('/v1/messages', messages('openai/compress', stream));
      const text = out.bytes.toString('utf8');
      assert.equal(out.status, 502, text);
      assert.match(String(out.headers['content-type']), /application\/json/);
      const err = JSON.parse(text);
      assert.equal(err.type, 'error');
      assert.match(err.error.message, /content-encoding compress, which the gateway cannot decode/);
      const rec = await fetchRecord(s.stack, String(out.headers['svc-id']));
      assert.equal(rec.response_status, 502);
    });
  }
});

describe('a relayed Responses answer the provider encoded', () => {
  for (const stream of [false, true]) {
    test(`Azure, gzip, ${stream ? 'stream' : 'JSON'}: the response store learns its id, so a GET of it goes back to Azure (not to openai, the default for an unknown id)`, async () => {
      const out = await postRaw('/v1/responses', { model: 'azure/gzip', input: 'x', stream });
      assert.equal(out.status, 200);
      assert.equal(out.headers['content-encoding'], 'gzip');
      const text = zlib.gunzipSync(out.bytes).toString('utf8');
      const id = /"id"\s*:\s*"(resp_[A-Za-z0-9]+)"/.exec(text)![1]!;
      // The observer stores the id as the answer passes, maybe just after the client has it: ask until the GET
      // goes to Azure (each GET of an id the store does not know yet goes to openai, the default).
      let provider: string | null = null;
      await waitFor(async () => {
        const got = await fetch(`${s.stack.gatewayUrl}/v1/responses/${id}`, { headers: { authorization: `Bearer ${s.stack.apiKey}` } });
        await got.arrayBuffer();
        provider = got.headers.get('svc-provider');
        return provider === 'azure';
      }, 5000).catch(() => undefined);
      assert.equal(provider, 'azure');
      const answers = (await (await fetch(`${s.stubUrl}/__responses`)).json()) as { path: string }[];
      assert.match(answers.at(-1)!.path, new RegExp(`^/openai/.*/responses/${id}`));
    });
  }
});

describe('a translated gzip stream cut short', () => {
  test('Messages → OpenAI chat, gzip stream, the client leaves mid-stream: the provider is let go and the gateway answers the next request', async () => {
    const url = new URL('/v1/messages', s.stack.gatewayUrl);
    await new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' } }, (res) => {
        assert.equal(res.statusCode, 200);
        // The first translated bytes arrived (the decoder and mapper are working): leave.
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (err) => ((err as { code?: string }).code === 'ECONNRESET' ? undefined : reject(err)));
      req.end(JSON.stringify(messages('openai/gzip-hang', true)));
    });
    // The gateway stopped the provider's answer (the stub saw its connection close).
    const deadline = Date.now() + 5000;
    let closed = false;
    while (!closed && Date.now() < deadline) {
      const answers = (await (await fetch(`${s.stubUrl}/__responses`)).json()) as { model: string; closedAt: number | null }[];
      closed = answers.some((a) => a.model === 'gzip-hang' && a.closedAt !== null);
      if (!closed) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(closed, 'the provider connection was not closed');
    const next = await postRaw('/v1/messages', messages('openai/gzip', true));
    assert.equal(next.status, 200);
    assert.match(next.bytes.toString('utf8'), /event: message_stop/);
  });
});

describe('a passed-through answer the provider encoded', () => {
  for (const enc of ENCODINGS) {
    test(`chat completions, ${enc}, JSON: the client gets the encoded bytes with their header; the log has the body and usage`, async () => {
      const out = await postRaw('/ai/chat/completions', { model: `openai/${enc}`, messages: [{ role: 'user', content: 'x' }] });
      assert.equal(out.status, 200);
      assert.equal(out.headers['content-encoding'], enc);
      const decode = enc === 'gzip' ? zlib.gunzipSync : enc === 'br' ? zlib.brotliDecompressSync : zlib.inflateSync;
      assert.equal(JSON.parse(decode(out.bytes).toString('utf8')).choices[0].message.content, 'The capital of France is Paris.');
      const rec = await fetchRecord(s.stack, String(out.headers['svc-id']));
      assert.equal(rec.prompt_tokens, 24);
      assert.equal(rec.completion_tokens, 8);
      assert.equal(rec.llmSchema.response.messages[0].content, 'The capital of France is Paris.');
    });
  }

  test('chat completions, gzip, stream: the client gets the encoded stream; the log folds it, with usage', async () => {
    const out = await postRaw('/ai/chat/completions', { model: 'openai/gzip', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'x' }] });
    assert.equal(out.status, 200);
    assert.equal(out.headers['content-encoding'], 'gzip');
    assert.match(zlib.gunzipSync(out.bytes).toString('utf8'), /data: \[DONE\]/);
    const rec = await fetchRecord(s.stack, String(out.headers['svc-id']));
    assert.equal(rec.prompt_tokens, 78);
    assert.ok(String(rec.llmSchema.response.messages[0].content).length > 0);
  });
});
