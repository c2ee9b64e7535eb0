/**
 * The provider's response headers as the client gets them (proxy/upstream/response.ts): every
 * header the provider sent, repeated ones kept apart, names lower-cased, hop-by-hop ones dropped,
 * the length kept on a passed-through body and set anew on a mapped one, plus the gateway's `Svc-*`
 * headers. The gateway runs in this process (`svc.features: none`) in front of a local upstream.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildConfig } from '../shared/config.ts';
import { createGateway, type Gateway } from '../proxy/gateway.ts';
import { createMetrics } from '../proxy/metrics.ts';

const CHAT_OK = '{"id":"chatcmpl-local","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
const AZURE_APIM_401 = '{"statusCode":401,"message":"Access denied due to invalid subscription key or wrong API endpoint."}';

let upstream: http.Server;
let gw: Gateway;
let url: string;

before(async () => {
  upstream = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const denied = req.url!.includes('/deployments/denied/');
      const text = denied ? AZURE_APIM_401 : CHAT_OK;
      res.writeHead(denied ? 401 : 200, [
        ['Content-Type', 'application/json'],
        ['Content-Length', String(Buffer.byteLength(text))],
        ['X-Request-Id', 'req_123'],
        ['Set-Cookie', 'a=1; Path=/'],
        ['Set-Cookie', 'b=2; Path=/'],
        ['Proxy-Authenticate', 'Basic realm="upstream"'],
        ['openai-processing-ms', '12'],
      ]);
      res.end(text);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const config = buildConfig({ svc: { features: 'none' }, providers: { azure: { 'base-url': upstreamUrl } } }, { AZURE_OPENAI_API_KEY: 'azure-local-key' });
  gw = createGateway({ config, logger: pino({ level: 'silent' }), controlPlane: null, metrics: createMetrics(null) });
  await gw.ready();
  await new Promise<void>((r) => gw.server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(gw.server.address() as AddressInfo).port}`;
});
after(async () => {
  await gw.close();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const chat = (model: string) =>
  fetch(`${url}/ai/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }), signal: AbortSignal.timeout(10_000) });

describe("the provider's response headers at the client", () => {
  test('passed through: every end-to-end header, repeats apart, hop-by-hop dropped, the length kept, Svc-* added', async () => {
    const res = await chat('azure/gpt-4o-mini');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), CHAT_OK);
    assert.equal(res.headers.get('x-request-id'), 'req_123');
    assert.equal(res.headers.get('openai-processing-ms'), '12');
    assert.deepEqual(res.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
    assert.equal(res.headers.get('proxy-authenticate'), null, 'hop-by-hop: not forwarded');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(CHAT_OK)));
    assert.equal(res.headers.get('svc-provider'), 'azure');
    assert.match(res.headers.get('svc-id') ?? '', /\S/);
  });

  test('mapped (an Azure API-gateway error in OpenAI’s shape): the provider’s headers kept, the length of the mapped body', async () => {
    const res = await chat('azure/denied');
    assert.equal(res.status, 401);
    const text = await res.text();
    assert.equal((JSON.parse(text) as { error: { type: string } }).error.type, 'authentication_error');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(text)));
    assert.equal(res.headers.get('x-request-id'), 'req_123');
    assert.deepEqual(res.headers.getSetCookie(), ['a=1; Path=/', 'b=2; Path=/']);
    assert.equal(res.headers.get('proxy-authenticate'), null);
    assert.equal(res.headers.get('svc-provider'), 'azure');
  });
});
