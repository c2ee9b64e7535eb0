/**
 * End-to-end: a non-streamed answer longer than `log-queue.max-body-bytes` is logged with the provider's usage, not
 * an estimate. The recorder keeps only a truncation note as its body, but reads the answer's top-level `usage` from
 * its last bytes (proxy/observers/response-recorder.ts), so the row has the provider's tokens and their cost.
 * Before, such a row said `svc-tokens-source: estimated`, completion 0 and a far too low cost (the new-user run,
 * `max-body-bytes: 60`: 7/0 tokens and 1.05e-06 USD against the provider's 24/8 and 8.4e-06).
 * Stub upstream, admin (real PostgreSQL) and proxy run as separate processes.
 * Run: node --import tsx --test test/e2e-recorder-capped-usage.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultConfig, fetchRecord, startStack, type Stack } from './support/stack.ts';

/** The log's body cap in this stack (bytes): smaller than the stub's chat and embeddings answers. */
const LOG_BODY_CAP = 60;

let stack: Stack;

before(async () => {
  stack = await startStack({
    config: (stubUrl) => ({ ...defaultConfig(stubUrl), 'log-queue': { 'flush-interval': '20ms', 'max-body-bytes': LOG_BODY_CAP } }),
  });
});
after(async () => {
  await stack?.stop();
});

/** POSTs `body` to the gateway's `path` and returns the logged record of it. */
async function logged(path: string, body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${stack.gatewayUrl}${path}`, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
  });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  return fetchRecord(stack, res.headers.get('svc-id')!);
}

describe('a non-streamed answer past the log body cap keeps the provider usage', () => {
  test('chat completion: the provider tokens and their cost, the body marked truncated', async () => {
    const rec = await logged('/ai/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }] });
    assert.equal(rec.response_status, 200);
    assert.equal(rec.prompt_tokens, 24);
    assert.equal(rec.completion_tokens, 8);
    assert.equal(rec.total_tokens, 32);
    assert.equal(rec.properties['svc-tokens-source'], 'provider');
    // gpt-4o-mini: 24 × $0.15/M + 8 × $0.60/M.
    assert.ok(Math.abs(rec.cost - 8.4e-6) < 1e-12, `cost ${rec.cost}`);
    const [row] = await stack.db.sql<any[]>`select extra from request_log where id = ${rec.request_id}`;
    assert.equal(row.extra.bodyTruncated, true);
  });

  test('embeddings: the usage at the end of the answer', async () => {
    const rec = await logged('/ai/embeddings', { model: 'openai/text-embedding-3-small', input: 'hello' });
    assert.equal(rec.prompt_tokens, 4);
    assert.equal(rec.properties['svc-tokens-source'], 'provider');
    assert.equal(rec.response_model, 'text-embedding-3-small');
  });
});
