/**
 * End-to-end: a model or deployment name that is a dot segment (`.`, `..`) or empty never leaves the URL path it
 * belongs in. Bedrock and Azure put the model (Azure: its deployment) in the path as one segment; encodeURIComponent
 * leaves `.` and `..` as they are and URL parsing collapses them, so `bedrock/..` was sent, signed with the gateway's
 * credentials, to `POST /converse`, `bedrock/.` to `/model/converse`, `azure/..` to `/openai/chat/completions?…`.
 * Each is refused with 400 naming `model` in the caller's dialect, and the provider (test/support/hostile-provider-stub.ts)
 * receives nothing; a well-formed name still reaches its path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AWS_TEST_ENV, clearStubRequests, startStubbedStack, stubRequests, type StubbedStack } from './support/stack.ts';

let s: StubbedStack;

before(async () => {
  s = await startStubbedStack(
    'test/support/hostile-provider-stub.ts',
    (stub) => ({ providers: { bedrock: { 'base-url': stub }, azure: { 'base-url': stub, deployments: { 'gpt-4o': 'prod-4o' } } } }),
    { ...AWS_TEST_ENV, AZURE_OPENAI_API_KEY: 'azure-provider-secret' },
  );
});
after(() => s?.stop());

/** A request body of the kind at `path`, for `model`. */
function bodyFor(path: string, model: string): Record<string, unknown> {
  if (path.endsWith('/messages')) return { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
  if (path.endsWith('/responses')) return { model, input: 'hi' };
  if (path.endsWith('/embeddings')) return { model, input: 'hi' };
  return { model, messages: [{ role: 'user', content: 'hi' }] };
}

/** POSTs to the gateway; returns the status, the parsed body and the paths the stub received meanwhile. */
async function send(path: string, model: string): Promise<{ status: number; json: any; reached: string[] }> {
  await clearStubRequests(s.stubUrl);
  const res = await fetch(`${s.stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(bodyFor(path, model)),
    headers: { authorization: `Bearer ${s.stack.apiKey}`, 'content-type': 'application/json' },
  });
  const text = await res.text();
  const reached = (await stubRequests(s.stubUrl)).filter((r) => r.method === 'POST').map((r) => String(r.url));
  return { status: res.status, json: JSON.parse(text), reached };
}

const REFUSED: Array<[string, string]> = [];
for (const name of ['..', '.']) {
  for (const path of ['/ai/chat/completions', '/ai/embeddings', '/ai/responses', '/v1/messages']) REFUSED.push([path, `bedrock/${name}`]);
  for (const path of ['/ai/chat/completions', '/ai/embeddings', '/v1/messages']) REFUSED.push([path, `azure/${name}`]);
}

describe('a dot-segment model name is refused before anything is signed or sent', () => {
  for (const [path, model] of REFUSED) {
    test(`${path} with model ${JSON.stringify(model)}: 400 naming model, nothing reaches the provider`, async () => {
      const { status, json, reached } = await send(path, model);
      assert.equal(status, 400, JSON.stringify(json));
      assert.deepEqual(reached, [], `the provider received ${reached.join(', ')}`);
      if (path === '/v1/messages') {
        assert.equal(json.type, 'error');
        assert.equal(json.error.type, 'invalid_request_error');
        assert.match(json.error.message, /model/);
      } else {
        assert.equal(json.error.param, 'model');
        assert.equal(json.error.type, 'invalid_request_error');
      }
    });
  }
});

describe('a well-formed name still reaches its own path', () => {
  for (const [path, model, expected] of [
    ['/ai/chat/completions', 'bedrock/amazon.nova-lite-v1:0', '/model/amazon.nova-lite-v1%3A0/converse'],
    ['/ai/chat/completions', 'bedrock/...', '/model/.../converse'],
    ['/ai/chat/completions', 'azure/gpt-4o', '/openai/deployments/prod-4o/chat/completions?api-version=2024-10-21'],
    ['/ai/chat/completions', 'azure/..x', '/openai/deployments/..x/chat/completions?api-version=2024-10-21'],
  ] as const) {
    test(`${path} with model ${JSON.stringify(model)} is sent to ${expected}`, async () => {
      const { reached } = await send(path, model);
      assert.deepEqual(reached, [expected]);
    });
  }
});
