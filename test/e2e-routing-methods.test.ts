/**
 * End-to-end: HTTP methods per route. Every endpoint kind's path (`/ai`, `/v1` and `/router/<name>`)
 * takes POST only: any other method is a 405 with `Allow: POST` in the caller's dialect (OpenAI's
 * `{"error":{"message","type","param","code"}}` with code `method_not_allowed`, Anthropic's
 * `{"type":"error","error":{"type":"invalid_request_error","message"}}` on the Messages kinds),
 * and nothing reaches the provider (before, PUT/PATCH/DELETE were sent upstream as a POST). The GET
 * routes (`/health`, `/metrics`, the models) take GET only; a stored response its own methods.
 *
 * Real processes (stub upstream, admin on a fresh PostgreSQL database, proxy), as in e2e-faults.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ENDPOINT_KINDS } from '../proxy/endpoints/index.ts';
import { clearStubRequests, defaultConfig, startStack, stubRequests, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({ config: defaultConfig });
});
after(async () => {
  await stack?.stop();
});

/** The error dialect each POST kind's clients speak (said here, not read from the kinds, so a kind answering in the wrong one fails). */
const DIALECT: Readonly<Record<string, 'openai' | 'anthropic'>> = {
  chat: 'openai',
  embeddings: 'openai',
  responses: 'openai',
  input_tokens: 'openai',
  messages: 'anthropic',
  count_tokens: 'anthropic',
};

/** Every POST path: each kind's `/ai` and `/v1` paths and its tail on the stack's router `default`. */
const POST_PATHS: ReadonlyArray<{ path: string; dialect: 'openai' | 'anthropic' }> = ENDPOINT_KINDS.flatMap((k) =>
  [...k.paths, `/router/default${k.routerTail}`].map((path) => ({ path, dialect: DIALECT[k.name]! })),
);

/** Methods a POST path does not serve. GET and HEAD carry no body (fetch refuses one); the others a chat body. */
const NOT_POST = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

const BODY = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, input: 'hi' });

function send(path: string, method: string, headers: Record<string, string> = {}): Promise<Response> {
  const withBody = method !== 'GET' && method !== 'HEAD';
  return fetch(`${stack.gatewayUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.apiKey}`, ...(withBody ? { 'content-type': 'application/json', 'svc-cache-enabled': 'true' } : {}), ...headers },
    body: withBody ? BODY : undefined,
  });
}

/** Asserts a 405 with `Allow: allow` and (but for HEAD, which has no body) the dialect's error shape. */
async function assertNotAllowed(res: Response, method: string, path: string, allow: string, dialect: 'openai' | 'anthropic'): Promise<void> {
  const what = `${method} ${path}`;
  assert.equal(res.status, 405, what);
  assert.equal(res.headers.get('allow'), allow, what);
  const text = await res.text();
  if (method === 'HEAD') return;
  const body = JSON.parse(text);
  if (dialect === 'openai') {
    assert.deepEqual(Object.keys(body), ['error'], what);
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type'], what);
    assert.equal(body.error.type, 'invalid_request_error', what);
    assert.equal(body.error.code, 'method_not_allowed', what);
    assert.match(body.error.message, new RegExp(`^${method} is not allowed`), what);
  } else {
    assert.deepEqual(Object.keys(body).sort(), ['error', 'type'], what);
    assert.equal(body.type, 'error', what);
    assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type'], what);
    assert.equal(body.error.type, 'invalid_request_error', what);
    assert.match(body.error.message, new RegExp(`^${method} is not allowed`), what);
  }
}

describe('methods on the POST endpoints', () => {
  test('the POST paths cover every endpoint kind routed by path', () => {
    assert.deepEqual(new Set(ENDPOINT_KINDS.map((k) => k.name)), new Set(Object.keys(DIALECT)));
    assert.equal(POST_PATHS.length, ENDPOINT_KINDS.length * 3);
  });

  test('every other method is a 405 with Allow: POST in the dialect of the path; nothing goes upstream', async () => {
    await clearStubRequests(stack.stubUrl);
    const wrong: string[] = [];
    for (const { path, dialect } of POST_PATHS) {
      for (const method of NOT_POST) await assertNotAllowed(await send(path, method), method, path, 'POST', dialect).catch((err: Error) => wrong.push(err.message));
    }
    // Checked first: what reached the provider is the worse half of a wrong answer.
    assert.deepEqual((await stubRequests(stack.stubUrl)).map((r) => `${r.method} ${r.url}`), [], 'no request reached the provider');
    assert.deepEqual(wrong, []);
  });

  test('the 405 comes before authentication (a method is wrong whoever asks)', async () => {
    const res = await send('/v1/chat/completions', 'PUT', { authorization: 'Bearer not-a-key' });
    await assertNotAllowed(res, 'PUT', '/v1/chat/completions', 'POST', 'openai');
  });

  test('POST still goes through', async () => {
    const res = await send('/v1/chat/completions', 'POST');
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { object: string }).object, 'chat.completion');
  });

  test('an unknown router or path stays a 404 whatever the method (in the Anthropic shape under /messages)', async () => {
    for (const method of ['GET', 'PUT']) {
      const router = await send('/router/nope/chat/completions', method);
      assert.equal(router.status, 404, method);
      assert.equal(((await router.json()) as any).error.code, 'router_not_found');
      const unknown = await send('/v1/nothing', method);
      assert.equal(unknown.status, 404, method);
      assert.equal(((await unknown.json()) as any).error.code, 'not_found');
      const batches = await send('/v1/messages/batches', method);
      assert.equal(batches.status, 404, method);
      assert.deepEqual(((await batches.json()) as any).error.type, 'not_found_error');
    }
  });
});

describe('methods on the GET routes and stored responses', () => {
  test('/health, /metrics and the models take GET and HEAD (its headers, no body): any other method is a 405 with Allow: GET, HEAD', async () => {
    for (const path of ['/health', '/metrics', '/ai/models', '/v1/models', '/ai/models/openai%2Fgpt-4o-mini', '/v1/models/openai/gpt-4o-mini']) {
      const get = await send(path, 'GET');
      assert.equal(get.status, 200, `GET ${path}`);
      const head = await send(path, 'HEAD');
      assert.equal(head.status, 200, `HEAD ${path}`);
      assert.equal(head.headers.get('content-type'), get.headers.get('content-type'), `HEAD ${path}: GET's content type`);
      assert.equal(await head.text(), '', `HEAD ${path}: no body`);
      for (const method of ['POST', 'PUT', 'DELETE']) await assertNotAllowed(await send(path, method), method, path, 'GET, HEAD', 'openai');
    }
  });

  test('a stored response takes GET and DELETE: another method is a 405 with Allow naming them', async () => {
    await clearStubRequests(stack.stubUrl);
    for (const path of ['/v1/responses/resp_abc', '/ai/responses/resp_abc', '/router/default/responses/resp_abc']) {
      for (const method of ['POST', 'PUT', 'PATCH']) {
        const res = await send(path, method);
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get('allow'), 'GET, DELETE');
        const body = (await res.json()) as any;
        assert.equal(body.error.code, 'method_not_allowed');
        assert.equal(body.error.type, 'invalid_request_error');
      }
    }
    assert.deepEqual(await stubRequests(stack.stubUrl), []);
  });
});
