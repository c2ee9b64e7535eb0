/**
 * The translator from OpenAI embeddings (client dialect `openai-embeddings`) to the InvokeModel bodies of
 * Bedrock's embedding models (wire format `bedrock-embeddings`): Amazon Titan (`{inputText}` → `{embedding}`)
 * and Cohere (`{texts}` → `{embeddings}`). Embeddings never stream.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html (Cohere),
 * https://platform.openai.com/docs/api-reference/embeddings (the client side).
 */
import { badRequest } from '../errors.ts';
import { upstreamBadResponse } from './shared/provider-errors.ts';
import { finiteOrZero, isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, TranslatorCall } from './types.ts';

/** The OpenAI embeddings request members this translator reads. */
export interface EmbeddingsRequest {
  model: string;
  input: unknown;
  encoding_format?: 'float' | 'base64' | string;
  dimensions?: number;
}

function embeddingInputs(body: EmbeddingsRequest): string[] {
  const input = body.input;
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length && input.every((item) => typeof item === 'string')) return input as string[];
  throw badRequest('bedrock embeddings take input as a string or an array of strings', 'input');
}

/** True for Cohere embedding model ids (`cohere.embed-...`, also with a region prefix such as `us.`). */
function isCohereEmbed(modelId: string): boolean {
  return /(^|\.)cohere\.embed/.test(modelId);
}

/**
 * Maps an OpenAI embeddings request to an InvokeModel body: Cohere models (`cohere.embed-*`) get
 * `{texts, input_type: "search_document"}`; other models (Amazon Titan) get `{inputText}` (plus `dimensions` when set)
 * and take exactly one input.
 * @throws {GatewayError} 400 for token-array inputs, or several inputs for a Titan model.
 */
export function toBedrockEmbeddingsRequest(body: EmbeddingsRequest): Record<string, unknown> {
  const inputs = embeddingInputs(body);
  if (isCohereEmbed(body.model)) return { texts: inputs, input_type: 'search_document' };
  if (inputs.length !== 1) throw badRequest('bedrock Titan embedding models take one input per request', 'input', 'unsupported_parameter');
  return { inputText: inputs[0], ...(typeof body.dimensions === 'number' ? { dimensions: body.dimensions } : {}) };
}

function floatsToBase64(values: number[]): string {
  const floats = Float32Array.from(values);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/**
 * Maps an InvokeModel embeddings response (Titan `{embedding, inputTextTokenCount}` or Cohere
 * `{embeddings: number[][] | {float: number[][]}}`) to an OpenAI embeddings list; with `encoding_format: "base64"`
 * each vector is base64 of little-endian float32s, as OpenAI sends it. Usage counts tokens (0 when Bedrock reports none).
 */
export function fromBedrockEmbeddings(response: Record<string, unknown>, request: EmbeddingsRequest): Record<string, unknown> {
  let vectors: number[][] = [];
  if (Array.isArray(response.embedding)) vectors = [response.embedding as number[]];
  else if (Array.isArray(response.embeddings)) vectors = response.embeddings as number[][];
  else if (isRecord(response.embeddings) && Array.isArray(response.embeddings.float)) vectors = response.embeddings.float as number[][];
  const tokens = finiteOrZero(response.inputTextTokenCount);
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: request.encoding_format === 'base64' ? floatsToBase64(vector) : vector,
    })),
    model: request.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

function translateRequest(call: TranslatorCall): Buffer {
  return Buffer.from(JSON.stringify(toBedrockEmbeddingsRequest(call.body as unknown as EmbeddingsRequest)));
}

function translateResponse(body: Buffer, call: TranslatorCall): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed)) {
    return upstreamBadResponse('bedrock returned a response that is not JSON');
  }
  return { status: 200, body: fromBedrockEmbeddings(parsed, call.body as unknown as EmbeddingsRequest) };
}

/**
 * `openai-embeddings` → `bedrock-embeddings`: requests by {@link toBedrockEmbeddingsRequest}, responses by
 * {@link fromBedrockEmbeddings} (502 `upstream_bad_response` for a body that is not JSON).
 */
export const openAIEmbeddingsToBedrockEmbeddings: MappingTranslator = {
  dialect: 'openai-embeddings',
  wireFormat: 'bedrock-embeddings',
  identity: false,
  translateRequest,
  translateResponse,
};
