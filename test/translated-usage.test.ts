/**
 * Usage as the gateway's translations report it to the client, and the tokens admin estimates when a
 * provider reported none:
 * - embeddings inputs given as token ids, estimated as one token per id (admin/ingest.ts).
 * The end-to-end costs are test/e2e-usage-cost.test.ts.
 * Run: node --import tsx --test test/translated-usage.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { recordToRow } from '../admin/ingest.ts';
import { logRecord } from './rest-support.ts';

describe('estimated embeddings tokens (no usage from the provider)', () => {
  const ids = [9906, 1917, 11, 1268, 527, 499, 30];
  const promptTokens = (input: unknown): unknown =>
    recordToRow(
      logRecord(randomUUID(), {
        endpoint: 'embeddings',
        path: '/ai/embeddings',
        provider: 'gemini',
        modelSent: 'gemini-embedding-001',
        requestBody: { model: 'gemini/gemini-embedding-001', input },
        responseBody: { object: 'list', data: [], model: 'gemini-embedding-001' },
        usage: null,
      }),
    ).prompt_tokens;

  it('a token id is one token, flat or in arrays of arrays', () => {
    assert.equal(promptTokens(ids), 7);
    assert.equal(promptTokens([ids, ids.slice(0, 3)]), 10);
  });

  it('texts are counted one by one', () => {
    assert.equal(promptTokens('hello world'), 2);
    assert.equal(promptTokens(['hello world', 'hello world']), 4);
  });
});
