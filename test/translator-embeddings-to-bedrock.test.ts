/**
 * The embeddings → Bedrock InvokeModel translation member by member (proxy/translators/openai-embeddings-to-bedrock-embeddings.ts):
 * every member of OpenAI's request has a decision (checked at compile time against the `openai` SDK's request type);
 * `dimensions` is sent as each model family takes it or refused when the model cannot give it, `user` is recorded,
 * an `encoding_format` OpenAI does not define is refused; usage comes from Titan's body count, else Bedrock's
 * `X-Amzn-Bedrock-Input-Token-Count` header, else the gateway's estimate marked as one (logged as estimated).
 */
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import type { EmbeddingCreateParams } from 'openai/resources/embeddings';
import type { ChatCompletionRequest } from '../shared/chat.ts';
import { tokenEstimateFactor } from '../shared/models.ts';
import { countTokens } from '../shared/token-estimate.ts';
import { EMBEDDINGS_MEMBERS, openAIEmbeddingsToBedrockEmbeddings } from '../proxy/translators/openai-embeddings-to-bedrock-embeddings.ts';
import type { TranslatorCall } from '../proxy/translators/types.ts';
import { refusal } from './support/refusal.ts';

function call(body: Record<string, unknown>): TranslatorCall {
  return { body: body as unknown as ChatCompletionRequest, stream: false, requestId: '00000000-0000-4000-8000-000000000002', removed: [], provider: 'bedrock' };
}

/** The InvokeModel body sent for `c` (parsed), with `c.removed` filled. */
const wire = (c: TranslatorCall): any => JSON.parse(openAIEmbeddingsToBedrockEmbeddings.translateRequest(c).toString('utf8'));

/** The client's answer to `answer` (Bedrock's body) with Bedrock's response headers `headers`. */
const answered = (c: TranslatorCall, answer: unknown, headers?: Record<string, string>): any =>
  openAIEmbeddingsToBedrockEmbeddings.translateResponse(Buffer.from(JSON.stringify(answer)), c, headers).body;

const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE_V3 = 'cohere.embed-english-v3';
const COHERE_V4 = 'us.cohere.embed-v4:0';

/** Every member of the `openai` SDK's embeddings request; one the SDK adds fails the type check until it is decided on. */
const OPENAI_MEMBERS: Record<keyof EmbeddingCreateParams, true> = { input: true, model: true, dimensions: true, encoding_format: true, user: true };

describe('embeddings → Bedrock: request members', () => {
  it('every member of OpenAI\'s request has its decision in the table', () => {
    for (const member of Object.keys(OPENAI_MEMBERS)) assert.ok(EMBEDDINGS_MEMBERS.has(member), `${member} is decided on`);
  });

  it('dimensions as each model takes it: Titan Text v2 dimensions, Titan Multimodal embeddingConfig, Cohere v4 output_dimension; a fixed size asked for is honoured', () => {
    assert.deepEqual(wire(call({ model: TITAN, input: 'a', dimensions: 256 })), { inputText: 'a', dimensions: 256 });
    assert.deepEqual(wire(call({ model: 'amazon.titan-embed-image-v1', input: 'a', dimensions: 384 })), { inputText: 'a', embeddingConfig: { outputEmbeddingLength: 384 } });
    assert.deepEqual(wire(call({ model: COHERE_V4, input: ['a', 'b'], dimensions: 512 })), { texts: ['a', 'b'], input_type: 'search_document', output_dimension: 512 });
    assert.deepEqual(wire(call({ model: COHERE_V3, input: ['a'], dimensions: 1024 })), { texts: ['a'], input_type: 'search_document' });
    assert.deepEqual(wire(call({ model: 'amazon.titan-embed-text-v1', input: 'a', dimensions: 1536 })), { inputText: 'a' });
  });

  it('user and vendor extras recorded; encoding_format float and base64 honoured; null members skipped', () => {
    const c = call({ model: TITAN, input: 'a', user: 'u1', encoding_format: 'base64', input_type: 'search_query', dimensions: null });
    assert.deepEqual(wire(c), { inputText: 'a' });
    assert.deepEqual(c.removed, ['user', 'input_type']);
    const plain = call({ model: COHERE_V3, input: ['a', 'b'], encoding_format: 'float' });
    wire(plain);
    assert.deepEqual(plain.removed, []);
  });

  const refused: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['a size Cohere Embed v3 cannot give', { model: COHERE_V3, input: ['a', 'b'], dimensions: 64 }, 'dimensions', /returns 1024 dimensions only, got 64/],
    ['a size Titan Text v2 cannot give', { model: TITAN, input: 'a', dimensions: 300 }, 'dimensions', /256, 512, 1024/],
    ['a size Cohere Embed v4 cannot give', { model: COHERE_V4, input: 'a', dimensions: 64 }, 'dimensions', /256, 512, 1024, 1536/],
    ['dimensions not a positive integer', { model: TITAN, input: 'a', dimensions: 'x' }, 'dimensions', /positive integer/],
    ['a negative dimensions', { model: TITAN, input: 'a', dimensions: -1 }, 'dimensions', /positive integer/],
    ['an encoding_format OpenAI does not define', { model: TITAN, input: 'a', encoding_format: 'hex' }, 'encoding_format', /"float" or "base64", got "hex"/],
    ['token ids', { model: COHERE_V3, input: [[1, 2]] }, 'input', /string/],
    ['several inputs to Titan', { model: TITAN, input: ['a', 'b'] }, 'input', /one input/],
  ];
  for (const [name, body, param, message] of refused) {
    it(`refuses ${name}, naming ${param}`, () => {
      const err = refusal(() => wire(call(body)));
      assert.equal(err.param, param);
      assert.match(err.message, message);
    });
  }
});

describe('embeddings → Bedrock: usage', () => {
  it('Titan: the body\'s inputTextTokenCount', () => {
    assert.deepEqual(answered(call({ model: TITAN, input: 'a' }), { embedding: [0.5], inputTextTokenCount: 5 }, { 'x-amzn-bedrock-input-token-count': '9' }).usage, { prompt_tokens: 5, total_tokens: 5 });
  });

  it('Cohere: the X-Amzn-Bedrock-Input-Token-Count header; without it the gateway\'s estimate, marked as one (never 0 as the provider\'s count)', () => {
    const c = call({ model: COHERE_V3, input: ['a', 'b'], encoding_format: 'base64' });
    const answer = { embeddings: [[1], [2]], id: 'x', response_type: 'embeddings_floats', texts: ['a', 'b'] };
    const withHeader = answered(c, answer, { 'x-amzn-bedrock-input-token-count': '7' });
    assert.deepEqual(withHeader.usage, { prompt_tokens: 7, total_tokens: 7 });
    assert.equal(Buffer.from(withHeader.data[1].embedding, 'base64').readFloatLE(0), 2);
    // OpenAI's embeddings object always has usage (clients read usage.prompt_tokens): without Bedrock's count, the
    // gateway's estimate (o200k_base × bedrock's factor), marked so the log records it as estimated.
    const estimated = { prompt_tokens: Math.ceil(2 * tokenEstimateFactor('bedrock')), total_tokens: Math.ceil(2 * tokenEstimateFactor('bedrock')), svc_token_count: 'estimate' };
    assert.deepEqual(answered(c, answer).usage, estimated);
    assert.deepEqual(answered(c, answer, { 'x-amzn-bedrock-input-token-count': 'many' }).usage, estimated);
    assert.equal(answered(call({ model: TITAN, input: 'hello world, hello' }), { embedding: [0.5] }).usage.prompt_tokens, Math.ceil(countTokens('hello world, hello') * tokenEstimateFactor('bedrock')));
    assert.deepEqual(answered(call({ model: COHERE_V4, input: ['a', 'b'] }), { embeddings: { float: [[1], [2]] } }, { 'x-amzn-bedrock-input-token-count': '3' }).usage, { prompt_tokens: 3, total_tokens: 3 });
  });
});
