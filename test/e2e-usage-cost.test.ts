/**
 * End-to-end: the tokens and cost the request log keeps for one provider answer, whichever API the
 * client spoke, through the running proxy and admin on PostgreSQL. The provider is
 * test/support/queued-answer-stub.ts, answering each request with the body the test queued: a
 * recorded fixture as it is, or a variant of one built here (named so where it is built).
 *
 * - Embeddings given as token ids, answered without usage, are estimated as one token per id.
 * Run: node --import tsx --test test/e2e-usage-cost.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fetchRecord, startStubbedStack, type StubbedStack } from './support/stack.ts';

let env: StubbedStack;

before(async () => {
  env = await startStubbedStack('test/support/queued-answer-stub.ts', (stub) => ({
    providers: {
      gemini: { 'base-url': `${stub}/v1beta/openai` },
    },
  }));
});
after(async () => {
  await env?.stop();
});

/** Queues the provider's next answers (bodies as text, byte for byte). */
async function queue(...answers: Array<{ body: string; contentType?: string }>): Promise<void> {
  const res = await fetch(`${env.stubUrl}/__answers`, { method: 'POST', body: JSON.stringify(answers) });
  assert.equal(res.status, 200);
}

/** POSTs `body` to the gateway with the stack's key: the status, the answer's text and the request id. */
async function post(path: string, body: unknown): Promise<{ status: number; text: string; id: string }> {
  const res = await fetch(`${env.stack.gatewayUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, text: await res.text(), id: res.headers.get('svc-id') ?? '' };
}

/** The logged request's token counts and cost: those named in `expected`, to compare with it. */
async function logged(id: string, expected: Record<string, unknown>): Promise<Record<string, unknown>> {
  const r = await fetchRecord(env.stack, id);
  const all: Record<string, unknown> = {
    prompt: r.prompt_tokens,
    completion: r.completion_tokens,
    total: r.total_tokens,
    reasoning: r.reasoning_tokens,
    cacheRead: r.prompt_cache_read_tokens,
    cacheWrite: r.prompt_cache_write_tokens,
    cacheWrite1h: r.properties['svc-cache-write-1h-tokens'] ?? null,
    source: r.properties['svc-tokens-source'],
    cost: r.cost,
  };
  return Object.fromEntries(Object.keys(expected).map((k) => [k, all[k]]));
}

describe('Embeddings given as token ids, answered without usage', () => {
  // Gemini's OpenAI-compatible embeddings answer, built here without usage (the case estimated).
  const answer = (n: number) => JSON.stringify({ object: 'list', data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })), model: 'gemini-embedding-001' });
  const ids = [9906, 1917, 11, 1268, 527, 499, 30];

  // $0.15 per million input tokens.
  for (const [name, input, tokens, n, cost] of [
    ['an array of token ids', ids, 7, 1, 0.00000105],
    ['an array of arrays of token ids', [ids, ids.slice(0, 3)], 10, 2, 0.0000015],
  ] as const) {
    test(`${name}: one token per id`, async () => {
      await queue({ body: answer(n) });
      const r = await post('/ai/embeddings', { model: 'gemini/gemini-embedding-001', input });
      assert.equal(r.status, 200, r.text);
      const want = { prompt: tokens, completion: 0, total: tokens, source: 'estimated', cost };
      assert.deepEqual(await logged(r.id, want), want);
    });
  }
});
