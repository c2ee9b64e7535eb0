/**
 * End-to-end: a router sends each endpoint kind only to the members that serve it. The test stack's
 * router `default` has only a chat group, [openai, groq]: its embeddings are balanced over the chat
 * members that offer embeddings (openai; groq has no embeddings endpoint), and a router none of whose
 * members offers a kind answers a 400 naming the router, without calling a provider. On a
 * model-mappings router a mapped model goes only to the members that offer it or have a mapping for
 * it. Providers are played by test/support/stub-upstream.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AWS_TEST_ENV, clearStubRequests, defaultConfig, startStack, stubRequests, type Stack } from './support/stack.ts';

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stub) => {
      const config = defaultConfig(stub) as { providers: Record<string, unknown>; routers: Record<string, unknown> };
      config.providers.bedrock = { 'base-url': stub, region: 'us-east-1' };
      // Even weights, so that a choice among all chat members would reach groq about half the time.
      config.routers.even = { 'load-balance': { chat: { strategy: 'weighted', providers: [{ provider: 'openai', weight: 1 }, { provider: 'groq', weight: 1 }] } } };
      config.routers.chatonly = { 'load-balance': { chat: { strategy: 'latency', providers: ['groq', 'deepseek'] } } };
      config.routers.mm = {
        'load-balance': { chat: { strategy: 'model-mappings', providers: ['anthropic', 'bedrock'], 'model-mappings': { 'gpt-4o-mini': ['anthropic/claude-sonnet-4-5'] } } },
      };
      return config;
    },
    proxyEnv: AWS_TEST_ENV,
  });
});
after(async () => {
  await stack?.stop();
});

async function post(path: string, body: unknown) {
  const res = await fetch(`${stack.gatewayUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, provider: res.headers.get('svc-provider'), body: (await res.json()) as any };
}

test("a router without an embeddings group sends embeddings only to the chat members that offer them", async () => {
  for (const router of ['default', 'even']) {
    const answers: Record<string, number> = {};
    for (let i = 0; i < 12; i++) {
      const r = await post(`/router/${router}/embeddings`, { model: 'text-embedding-3-small', input: 'hello' });
      const key = `${r.status} ${r.provider}`;
      answers[key] = (answers[key] ?? 0) + 1;
    }
    assert.deepEqual(answers, { '200 openai': 12 }, router);
  }
});

test('a router none of whose members offers the kind: 400 naming the router, no provider called', async () => {
  await clearStubRequests(stack.stubUrl);
  const r = await post('/router/chatonly/embeddings', { model: 'text-embedding-3-small', input: 'hello' });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, {
    error: { message: 'router "chatonly" has no provider that offers embeddings (its providers: groq, deepseek)', type: 'invalid_request_error', param: null, code: 'unsupported_endpoint' },
  });
  assert.deepEqual(await stubRequests(stack.stubUrl), []);
});

test('model-mappings: a mapped model goes to a member that offers it or its mapping, never unmapped to one that has neither', async () => {
  await clearStubRequests(stack.stubUrl);
  for (let i = 0; i < 30; i++) assert.equal((await post('/router/mm/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] })).status, 200);
  const sent = new Set((await stubRequests(stack.stubUrl)).map((q) => `${q.url} ${q.body.model}`));
  assert.deepEqual([...sent], ['/v1/messages claude-sonnet-4-5'], 'bedrock, which neither offers nor maps gpt-4o-mini, gets none');
});
