/**
 * End-to-end: what becomes of an embeddings request's members on their way to Bedrock's Titan and Cohere models,
 * driven by the `openai` SDK (and the AI SDK) against real processes (admin, the proxy signing with the test AWS key,
 * and test/support/bedrock-stub.ts playing Bedrock's InvokeModel):
 *
 * - `dimensions` reaches Titan Text v2 as `dimensions`; a size Cohere Embed v3 cannot give is a 400 naming
 *   `dimensions`, and nothing reaches Bedrock; `user` is not sent and is named in `Svc-Removed-Members` and the log;
 *   an `encoding_format` OpenAI does not define is a 400 naming it;
 * - usage: Titan's body count; Cohere's from Bedrock's `X-Amzn-Bedrock-Input-Token-Count` header, logged as the
 *   provider's; without the header the answer's usage is the gateway's estimate and the log records those tokens
 *   as estimated (`svc-tokens-source` `estimated`), never 0 as the provider's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { embedMany } from 'ai';
import { useBedrockMembersStack } from './support/members-stack.ts';
import { fetchRecord } from './support/stack.ts';
import { clientRefusal } from './support/refusal.ts';

type Json = Record<string, any>;

const TITAN = 'bedrock/amazon.titan-embed-text-v2:0';
const COHERE = 'bedrock/cohere.embed-english-v3';
/** A Cohere model id the stub answers without the token count header. */
const COHERE_UNCOUNTED = 'bedrock/cohere.embed-english-v3-no-token-count';

const bedrock = useBedrockMembersStack();
/** The InvokeModel calls that reached the stub since they were last cleared. */
const { openai, sent: sentToBedrock } = bedrock;

describe('embeddings → Bedrock: request members', () => {
  test('Titan: dimensions sent as Titan takes it; user recorded in the header and the log; usage from the body', async () => {
    await bedrock.clear();
    const { data, response } = await openai().embeddings.create({ model: TITAN, input: 'hello world', dimensions: 256, user: 'u1' }).withResponse();
    assert.deepEqual(data.data[0]!.embedding, [0.5, -0.25]);
    assert.deepEqual(data.usage, { prompt_tokens: 2, total_tokens: 2 });
    const [sent] = await sentToBedrock();
    assert.match(decodeURIComponent(sent!.url), /^\/model\/amazon\.titan-embed-text-v2:0\/invoke$/);
    assert.deepEqual(sent!.body, { inputText: 'hello world', dimensions: 256 });
    assert.equal(response.headers.get('svc-removed-members'), 'user');
    const rec = await fetchRecord(bedrock.stack, response.headers.get('svc-id')!);
    assert.deepEqual(JSON.parse(rec.properties['svc-removed-members']), ['user']);
    assert.equal(rec.prompt_tokens, 2);
    assert.equal(rec.properties['svc-tokens-source'], 'provider');
  });

  test('a size Cohere Embed v3 cannot give and an encoding_format OpenAI does not define are refused naming them; nothing reaches Bedrock', async () => {
    await bedrock.clear();
    const dims = await clientRefusal(() => openai().embeddings.create({ model: COHERE, input: ['a', 'b'], dimensions: 64 }));
    assert.equal(dims.param, 'dimensions');
    assert.match(dims.message, /1024 dimensions only, got 64/);
    const res = await fetch(`${bedrock.stack.gatewayUrl}/ai/embeddings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bedrock.stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: TITAN, input: 'a', encoding_format: 'hex' }),
    });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as Json).error.param, 'encoding_format');
    assert.deepEqual(await sentToBedrock(), []);
  });
});

describe('embeddings → Bedrock: Cohere usage', () => {
  test('with X-Amzn-Bedrock-Input-Token-Count: the answer\'s usage and the log\'s provider count (base64 vectors too)', async () => {
    const { data, response } = await openai().embeddings.create({ model: COHERE, input: ['hello', 'world'], dimensions: 1024, encoding_format: 'base64' }).withResponse();
    assert.deepEqual(data.usage, { prompt_tokens: 4, total_tokens: 4 });
    assert.equal(data.data.length, 2);
    const rec = await fetchRecord(bedrock.stack, response.headers.get('svc-id')!);
    assert.equal(rec.prompt_tokens, 4);
    assert.equal(rec.properties['svc-tokens-source'], 'provider');
  });

  test('without the header: the answer\'s usage is the gateway\'s estimate, and the log records those tokens as estimated', async () => {
    const { data, response } = await openai().embeddings.create({ model: COHERE_UNCOUNTED, input: ['hello', 'world'] }).withResponse();
    assert.equal(data.data.length, 2);
    assert.ok(data.usage.prompt_tokens > 0, JSON.stringify(data.usage));
    assert.equal(data.usage.total_tokens, data.usage.prompt_tokens);
    const rec = await fetchRecord(bedrock.stack, response.headers.get('svc-id')!);
    assert.equal(rec.properties['svc-tokens-source'], 'estimated');
    assert.equal(rec.prompt_tokens, data.usage.prompt_tokens, 'the log has the tokens the client was told');
  });

  test('the AI SDK: embedMany reads the vectors whether Bedrock counted the tokens or not', async () => {
    const provider = bedrock.aiSdk();
    const counted = await embedMany({ model: provider.embedding(COHERE), values: ['a', 'b'], maxRetries: 0 });
    assert.deepEqual(counted.embeddings, [
      [0.5, -0.25],
      [1.5, -0.25],
    ]);
    assert.equal(counted.usage.tokens, 4);
    const uncounted = await embedMany({ model: provider.embedding(COHERE_UNCOUNTED), values: ['a', 'b'], maxRetries: 0 });
    assert.equal(uncounted.embeddings.length, 2);
  });
});
