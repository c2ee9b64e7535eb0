/**
 * The translator from OpenAI embeddings (client dialect `openai-embeddings`) to the InvokeModel bodies of
 * Bedrock's embedding models (wire format `bedrock-embeddings`): Amazon Titan (`{inputText}` → `{embedding}`)
 * and Cohere (`{texts}` → `{embeddings}`). Embeddings never stream. Every member of OpenAI's request is mapped,
 * removed and recorded in `call.removed`, or refused ({@link EMBEDDINGS_MEMBERS}):
 *
 * | embeddings member | Titan (`amazon.titan-embed-*` and any model not Cohere's) | Cohere (`cohere.embed-*`) |
 * | --- | --- | --- |
 * | `model` | the URL's model id (the transport) | the same |
 * | `input`, a string or an array of strings | `inputText`: one input a request (several refused, 400) | `texts`, with `input_type: "search_document"` |
 * | `input` as token ids | refused (400): Bedrock takes text | the same |
 * | `dimensions` | `dimensions` (Titan Text v2: 256, 512 or 1024); Titan Multimodal: `embeddingConfig.outputEmbeddingLength` (256, 384 or 1024); Titan Text v1 (G1): only its 1,536 | Embed v4: `output_dimension` (256, 512, 1,024 or 1,536); Embed v3: only its 1,024 |
 * | `encoding_format` | `float` (the default) as Bedrock answers; `base64`: the vectors as base64 of little-endian float32s, as OpenAI sends them; any other value refused (400: OpenAI takes only these two) | the same |
 * | `user` | removed and recorded: Bedrock has no end-user member | the same |
 * | any other (vendor extras) | removed and recorded | the same |
 *
 * A `dimensions` a model cannot give is refused (400 naming it), never dropped: the client stores vectors of the length
 * it asked for. A member set to null, `[]` or `{}` carries nothing and is not reported. Usage: Titan's `inputTextTokenCount`, else the
 * `X-Amzn-Bedrock-Input-Token-Count` response header (Cohere's body has no count); with neither, the gateway's estimate of
 * the input (OpenAI's embeddings object always has `usage`, and clients read `usage.prompt_tokens`), marked
 * `svc_token_count: "estimate"` so that the log records the tokens as estimated, never 0 or a guess as the provider's.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-mm.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v3.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed-v4.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html (response headers),
 * https://platform.openai.com/docs/api-reference/embeddings (the client side).
 */
import { ESTIMATED_USAGE_MEMBER, ESTIMATED_USAGE_VALUE } from '../../shared/record.ts';
import { countTokens, estimateSpec } from '../../shared/token-estimate.ts';
import { badRequest } from '../errors.ts';
import { upstreamBadResponse } from './shared/provider-errors.ts';
import { nothing, positiveIntegerAt, readMembers, record, type MemberHandler, type MemberState } from './shared/request-members.ts';
import { isRecord, parseJson } from './shared/values.ts';
import type { MappedResponse, MappingTranslator, ResponseHeaders, TranslatorCall } from './types.ts';

/** The OpenAI embeddings request members this translator reads (untrusted JSON: each is checked). */
export interface EmbeddingsRequest {
  model: string;
  input: unknown;
  encoding_format?: unknown;
  dimensions?: unknown;
  user?: unknown;
  [member: string]: unknown;
}

/** The response header in which Bedrock reports the input tokens of an InvokeModel call. */
export const INPUT_TOKEN_COUNT_HEADER = 'x-amzn-bedrock-input-token-count';

/** How a family of embedding models takes an output size: the member it goes in and the sizes it accepts, or its one size. */
type Dimensions = { readonly member: 'dimensions' | 'embeddingConfig' | 'output_dimension'; readonly sizes: readonly number[] | null } | { readonly fixed: number };

/** The output sizes of the Bedrock embedding models by model id (checked in order; an unknown non-Cohere model is sent `dimensions` as Titan Text v2 takes it). */
const DIMENSIONS: ReadonlyArray<[RegExp, Dimensions]> = [
  [/(^|\.)cohere\.embed-v4/, { member: 'output_dimension', sizes: [256, 512, 1024, 1536] }],
  [/(^|\.)cohere\.embed/, { fixed: 1024 }],
  [/(^|\.)amazon\.titan-embed-text-v2/, { member: 'dimensions', sizes: [256, 512, 1024] }],
  [/(^|\.)amazon\.titan-embed-text-v1/, { fixed: 1536 }],
  [/(^|\.)amazon\.titan-embed-image-v1/, { member: 'embeddingConfig', sizes: [256, 384, 1024] }],
];

/** True for Cohere embedding model ids (`cohere.embed-...`, also with a region prefix such as `us.`). */
function isCohereEmbed(modelId: string): boolean {
  return /(^|\.)cohere\.embed/.test(modelId);
}

function embeddingInputs(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (Array.isArray(input) && input.length && input.every((item) => typeof item === 'string')) return input as string[];
  throw badRequest('bedrock embeddings take input as a string or an array of strings', 'input');
}

/** Writes the client's `dimensions` onto `out` as `model` takes it (table above). */
function setDimensions(value: unknown, model: string, out: Record<string, unknown>): void {
  const size = positiveIntegerAt(value, 'dimensions');
  const rule = DIMENSIONS.find(([pattern]) => pattern.test(model))?.[1] ?? { member: 'dimensions', sizes: null };
  if ('fixed' in rule) {
    if (size !== rule.fixed) throw badRequest(`dimensions: bedrock model ${model} returns ${rule.fixed} dimensions only, got ${size}`, 'dimensions', 'unsupported_parameter');
    return;
  }
  if (rule.sizes && !rule.sizes.includes(size)) {
    throw badRequest(`dimensions: bedrock model ${model} returns ${rule.sizes.join(', ')} dimensions, got ${size}`, 'dimensions', 'unsupported_parameter');
  }
  out[rule.member] = rule.member === 'embeddingConfig' ? { outputEmbeddingLength: size } : size;
}

/** What the members write while they are read. */
interface Pending extends MemberState {
  readonly model: string;
  readonly out: Record<string, unknown>;
}

function encodingFormat(value: unknown): void {
  if (value !== 'float' && value !== 'base64') throw badRequest(`encoding_format must be "float" or "base64", got ${JSON.stringify(value)}`, 'encoding_format');
}

/**
 * The decision on every member of OpenAI's embeddings request (the table above); a member that is not here is recorded
 * as removed.
 */
export const EMBEDDINGS_MEMBERS: ReadonlyMap<string, MemberHandler<Pending>> = new Map<string, MemberHandler<Pending>>([
  ['model', nothing],
  // Read first, into the body's first member.
  ['input', nothing],
  ['dimensions', (v, p) => setDimensions(v, p.model, p.out)],
  ['encoding_format', encodingFormat],
  ['user', record('user')],
]);

/**
 * Maps an OpenAI embeddings request to an InvokeModel body per the table above, pushing the members it removes to
 * `removed`: Cohere models (`cohere.embed-*`) get `{texts, input_type: "search_document"}`; other models (Amazon Titan)
 * get `{inputText}` and take exactly one input; `dimensions` as the model takes it.
 * @throws {GatewayError} 400 for token-array inputs, several inputs for a Titan model, a `dimensions` the model cannot
 *   give, an `encoding_format` OpenAI does not define.
 */
export function toBedrockEmbeddingsRequest(body: EmbeddingsRequest, removed: string[] = []): Record<string, unknown> {
  if (!isRecord(body)) throw badRequest('the request body must be a JSON object', null);
  const inputs = embeddingInputs(body.input);
  let out: Record<string, unknown>;
  if (isCohereEmbed(body.model)) out = { texts: inputs, input_type: 'search_document' };
  else if (inputs.length !== 1) throw badRequest('bedrock Titan embedding models take one input per request', 'input', 'unsupported_parameter');
  else out = { inputText: inputs[0] };
  readMembers(body, EMBEDDINGS_MEMBERS, { model: body.model, out, removed });
  return out;
}

function floatsToBase64(values: number[]): string {
  const floats = Float32Array.from(values);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/** A token count: a non-negative integer (a number, or the digits of a header), else undefined. */
function tokenCount(value: unknown): number | undefined {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** The input tokens Bedrock reported: Titan's `inputTextTokenCount`, else the response header; undefined when neither says. */
function inputTokens(response: Record<string, unknown>, headers: ResponseHeaders | undefined): number | undefined {
  const header = headers?.[INPUT_TOKEN_COUNT_HEADER];
  return tokenCount(response.inputTextTokenCount) ?? tokenCount(typeof header === 'string' ? header : header?.[0]);
}

/**
 * The gateway's estimate of the request's input tokens: each text counted with the model's encoding (o200k_base for
 * Bedrock's models), times the provider's factor (shared/token-estimate.ts), rounded up. Only the rare answer
 * without Bedrock's count pays for it.
 */
function estimatedInputTokens(request: EmbeddingsRequest): number {
  const spec = estimateSpec('bedrock', String(request.model));
  let tokens = 0;
  for (const text of embeddingInputs(request.input)) tokens += countTokens(text, spec.encoding);
  return Math.ceil(tokens * spec.factor);
}

/** OpenAI's `usage` of an embeddings list: Bedrock's count, else the gateway's estimate marked as one. */
function usageOf(response: Record<string, unknown>, request: EmbeddingsRequest, headers: ResponseHeaders | undefined): Record<string, unknown> {
  const reported = inputTokens(response, headers);
  if (reported !== undefined) return { prompt_tokens: reported, total_tokens: reported };
  const estimated = estimatedInputTokens(request);
  return { prompt_tokens: estimated, total_tokens: estimated, [ESTIMATED_USAGE_MEMBER]: ESTIMATED_USAGE_VALUE };
}

/**
 * Maps an InvokeModel embeddings response (Titan `{embedding, inputTextTokenCount}` or Cohere
 * `{embeddings: number[][] | {float: number[][]}}`) to an OpenAI embeddings list; with `encoding_format: "base64"`
 * each vector is base64 of little-endian float32s, as OpenAI sends it. `usage` is always there: the input tokens
 * Bedrock reported (the body's count, else the `X-Amzn-Bedrock-Input-Token-Count` of `headers`), else the gateway's
 * estimate with `svc_token_count: "estimate"` (the log then records the tokens as estimated, not as the provider's).
 * @throws {GatewayError} 400 when `request.input` is not a string or an array of strings (the request was refused
 *   for it already, so only a caller skipping {@link toBedrockEmbeddingsRequest} meets it).
 */
export function fromBedrockEmbeddings(response: Record<string, unknown>, request: EmbeddingsRequest, headers?: ResponseHeaders): Record<string, unknown> {
  let vectors: number[][] = [];
  if (Array.isArray(response.embedding)) vectors = [response.embedding as number[]];
  else if (Array.isArray(response.embeddings)) vectors = response.embeddings as number[][];
  else if (isRecord(response.embeddings) && Array.isArray(response.embeddings.float)) vectors = response.embeddings.float as number[][];
  return {
    object: 'list',
    data: vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: request.encoding_format === 'base64' ? floatsToBase64(vector) : vector,
    })),
    model: request.model,
    usage: usageOf(response, request, headers),
  };
}

/** The InvokeModel body of the call; removed members go to `call.removed` (when present). */
function translateRequest(call: TranslatorCall): Buffer {
  return Buffer.from(JSON.stringify(toBedrockEmbeddingsRequest(call.body as unknown as EmbeddingsRequest, call.removed)));
}

function translateResponse(body: Buffer, call: TranslatorCall, headers?: ResponseHeaders): MappedResponse {
  const parsed = parseJson(body);
  if (!isRecord(parsed)) {
    return upstreamBadResponse('bedrock returned a response that is not JSON');
  }
  return { status: 200, body: fromBedrockEmbeddings(parsed, call.body as unknown as EmbeddingsRequest, headers) };
}

/**
 * `openai-embeddings` → `bedrock-embeddings`: requests by {@link toBedrockEmbeddingsRequest}, responses by
 * {@link fromBedrockEmbeddings} with the provider's response headers (502 `upstream_bad_response` for a body that is
 * not JSON).
 */
export const openAIEmbeddingsToBedrockEmbeddings: MappingTranslator = {
  dialect: 'openai-embeddings',
  wireFormat: 'bedrock-embeddings',
  identity: false,
  translateRequest,
  translateResponse,
};
