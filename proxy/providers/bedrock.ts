/**
 * AWS Bedrock adapter (bedrock-runtime): OpenAI chat requests → Converse / ConverseStream, OpenAI
 * embeddings requests → InvokeModel for Titan / Cohere embedding models, every request signed with SigV4.
 * Responses (JSON, the binary `application/vnd.amazon.eventstream` stream, error bodies) map back to
 * OpenAI's shapes.
 *
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html,
 * https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-embed.html (Cohere),
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html (SigV4),
 * https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream (event-stream framing).
 *
 * The @smithy packages (SigV4, the event-stream codec; ~5-15 MB of RSS together) are imported on the
 * first Bedrock request, not when this module is: a gateway that never calls Bedrock never loads them
 * (see {@link loadEventStream} and {@link signBedrockRequest}).
 */
import { Transform } from 'node:stream';
import type { EventStreamCodec } from '@smithy/eventstream-codec';
import type {
  ChatCompletion,
  ChatCompletionRequest,
  ChatContentPart,
  ChatMessage,
  ChatToolCall,
  ChatUsage,
  OpenAIErrorBody,
} from '../../shared/chat.ts';
import { GatewayError, badRequest } from '../errors.ts';
import {
  appendTurn,
  assertSingleChoice,
  contentText,
  errorTypeForStatus,
  fallbackErrorMessage,
  maxTokensOf,
  openAIUsage,
  parseDataUrl,
  parseJson,
  parseToolArguments,
  stopList,
  truncatedStreamError,
} from './anthropic.ts';
import { ChunkWriter, SSE_DONE, sseError } from './sse.ts';
import { loadOnce } from '../../shared/lazy.ts';
import type { Endpoint, MappedResponse, ProviderAdapter, ProviderCall, UpstreamRequest } from './types.ts';

/** AWS credentials for SigV4 (from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** An environment to read AWS settings from (`process.env` or a test object). */
export type AwsEnv = Record<string, string | undefined>;

/**
 * Reads SigV4 credentials from an environment: `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` (both required)
 * and the optional `AWS_SESSION_TOKEN`. Returns null when either required variable is unset or empty.
 */
export function awsCredentialsFromEnv(env: AwsEnv = process.env): AwsCredentials | null {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return null;
  const sessionToken = env.AWS_SESSION_TOKEN;
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : { accessKeyId, secretAccessKey };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function num(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

// ---------------------------------------------------------------------------------------------
// Request mapping
// ---------------------------------------------------------------------------------------------

/** One Converse content block (`{text}`, `{image}`, `{document}`, `{toolUse}`, `{toolResult}`, `{cachePoint}`, ...). */
export type ConverseBlock = Record<string, unknown>;

/** The body of `POST /model/{modelId}/converse` (and `/converse-stream`) as this adapter builds it. */
export interface ConverseRequest {
  messages: Array<{ role: 'user' | 'assistant'; content: ConverseBlock[] }>;
  system?: ConverseBlock[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: {
    tools: Array<{ toolSpec: { name: string; description?: string; inputSchema: { json: unknown } } }>;
    toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
  };
}

const IMAGE_FORMATS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** Bedrock document names allow letters, digits, single spaces, hyphens, parentheses and square brackets. */
function documentName(filename: unknown, fallback: string): string {
  const base = typeof filename === 'string' ? filename.replace(/\.[^.]*$/, '') : '';
  const cleaned = base.replace(/[^A-Za-z0-9 ()[\]-]+/g, '-').replace(/\s+/g, ' ').trim().slice(0, 200);
  return cleaned || fallback;
}

function converseBlocks(content: ChatMessage['content'], param: string): ConverseBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (!Array.isArray(content)) throw badRequest(`${param} must be a string or an array of content parts`, param);
  const blocks: ConverseBlock[] = [];
  content.forEach((part: ChatContentPart, j) => {
    const p = `${param}[${j}]`;
    if (!isRecord(part)) throw badRequest(`${p} must be an object`, p);
    switch (part.type) {
      case 'text':
      case 'input_text':
        if (typeof part.text !== 'string') throw badRequest(`${p}.text must be a string`, `${p}.text`);
        if (part.text !== '') blocks.push({ text: part.text });
        break;
      case 'image_url': {
        const url = part.image_url?.url;
        const data = typeof url === 'string' ? parseDataUrl(url) : null;
        const format = data ? IMAGE_FORMATS[data.mediaType] : undefined;
        if (!data || !format) {
          throw badRequest(`${p}: bedrock accepts images only as png, jpeg, gif or webp base64 data: URLs`, `${p}.image_url.url`);
        }
        blocks.push({ image: { format, source: { bytes: data.base64 } } });
        break;
      }
      case 'file': {
        const file = isRecord(part.file) ? part.file : {};
        const data = typeof file.file_data === 'string' ? parseDataUrl(file.file_data) : null;
        if (!data || data.mediaType !== 'application/pdf') {
          throw badRequest(`${p}: bedrock accepts files only as PDF data URLs in file.file_data`, `${p}.file.file_data`);
        }
        blocks.push({ document: { format: 'pdf', name: documentName(file.filename, `document ${j + 1}`), source: { bytes: data.base64 } } });
        break;
      }
      default:
        throw badRequest(`${p}: content part type ${JSON.stringify(part.type)} is not supported by bedrock`, `${p}.type`);
    }
    if (part.cache_control !== undefined) blocks.push({ cachePoint: { type: 'default' } });
  });
  return blocks;
}

/**
 * Maps an OpenAI chat-completions body to a Converse request body (the model id goes in the URL).
 *
 * - `system`/`developer` messages → `system: [{text}]`; consecutive same-role turns are merged;
 * - text parts → `{text}`; image `data:` URLs → `{image: {format, source: {bytes: <base64>}}}` (http(s) image
 *   URLs are rejected: Converse takes bytes or S3 locations only); PDF `file` parts → `{document}`;
 *   parts with `cache_control` are followed by a `{cachePoint: {type: "default"}}` block;
 * - assistant `tool_calls` → `{toolUse: {toolUseId, name, input}}`; `tool` messages → user `{toolResult: {toolUseId, content: [{text}]}}`;
 * - `max_completion_tokens`/`max_tokens`, `temperature`, `top_p`, `stop` → `inferenceConfig` (maxTokens, temperature, topP, stopSequences);
 * - `tools` → `toolConfig.tools[].toolSpec {name, description, inputSchema: {json}}`; `tool_choice` auto → `{auto:{}}`,
 *   required → `{any:{}}`, `{function:{name}}` → `{tool:{name}}`, none → tools omitted (kept without a choice when the
 *   history holds tool blocks, which Converse requires a toolConfig for).
 * @throws {GatewayError} 400 for what Converse cannot express (`n` > 1, http image URLs, audio parts, unknown roles,
 *   non-function tools, invalid tool-call arguments JSON).
 */
export function toConverseRequest(body: ChatCompletionRequest): ConverseRequest {
  if (!Array.isArray(body.messages)) throw badRequest('messages must be an array', 'messages');
  assertSingleChoice(body, 'bedrock');
  const system: ConverseBlock[] = [];
  const messages: ConverseRequest['messages'] = [];
  let hasToolBlocks = false;
  const push = (role: 'user' | 'assistant', blocks: ConverseBlock[]) => appendTurn(messages, role, blocks);

  body.messages.forEach((message, i) => {
    const param = `messages[${i}]`;
    if (!isRecord(message)) throw badRequest(`${param} must be an object`, param);
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...converseBlocks(message.content, `${param}.content`).filter((b) => 'text' in b || 'cachePoint' in b));
        break;
      case 'user':
        push('user', converseBlocks(message.content, `${param}.content`));
        break;
      case 'assistant': {
        const content = Array.isArray(message.content) ? message.content.filter((part) => part?.type !== 'refusal') : message.content;
        const blocks = converseBlocks(content, `${param}.content`);
        (message.tool_calls ?? []).forEach((call: ChatToolCall, j) => {
          const p = `${param}.tool_calls[${j}]`;
          if (!isRecord(call) || !isRecord(call.function) || typeof call.function.name !== 'string') {
            throw badRequest(`${p} must be {"id","type":"function","function":{"name","arguments"}}`, p);
          }
          blocks.push({
            toolUse: { toolUseId: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments, `${p}.function.arguments`) },
          });
          hasToolBlocks = true;
        });
        push('assistant', blocks);
        break;
      }
      case 'tool': {
        if (typeof message.tool_call_id !== 'string') throw badRequest(`${param}.tool_call_id is required`, `${param}.tool_call_id`);
        const text = contentText(message.content);
        push('user', [{ toolResult: { toolUseId: message.tool_call_id, content: text ? [{ text }] : [] } }]);
        hasToolBlocks = true;
        break;
      }
      default:
        throw badRequest(`${param}.role ${JSON.stringify(message.role)} is not supported by bedrock`, `${param}.role`);
    }
  });

  const request: ConverseRequest = { messages };
  if (system.length) request.system = system;
  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = maxTokensOf(body);
  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (typeof body.temperature === 'number') inference.temperature = body.temperature;
  if (typeof body.top_p === 'number') inference.topP = body.top_p;
  const stops = stopList(body.stop);
  if (stops) inference.stopSequences = stops;
  if (Object.keys(inference).length) request.inferenceConfig = inference;

  if (Array.isArray(body.tools) && body.tools.length) {
    const tools = body.tools.map((tool, i) => {
      if (tool?.type !== 'function' || !isRecord(tool.function) || typeof tool.function.name !== 'string') {
        throw badRequest(`tools[${i}]: only {"type":"function","function":{"name",...}} tools are supported by bedrock`, `tools[${i}]`);
      }
      const fn = tool.function;
      return {
        toolSpec: {
          name: fn.name,
          ...(typeof fn.description === 'string' ? { description: fn.description } : {}),
          inputSchema: { json: fn.parameters ?? { type: 'object', properties: {} } },
        },
      };
    });
    const choice = body.tool_choice;
    if (choice === 'none') {
      if (hasToolBlocks) request.toolConfig = { tools };
    } else if (choice === undefined || choice === null || choice === 'auto') {
      request.toolConfig = { tools, ...(choice === 'auto' ? { toolChoice: { auto: {} } } : {}) };
    } else if (choice === 'required') {
      request.toolConfig = { tools, toolChoice: { any: {} } };
    } else if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
      request.toolConfig = { tools, toolChoice: { tool: { name: choice.function.name } } };
    } else {
      throw badRequest('tool_choice must be "auto", "required", "none" or {"type":"function","function":{"name":...}}', 'tool_choice');
    }
  }
  return request;
}

// ---------------------------------------------------------------------------------------------
// Response mapping
// ---------------------------------------------------------------------------------------------

/** Converse `usage` (tokens; `inputTokens` excludes cache reads and writes). */
export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  [member: string]: unknown;
}

/** A Converse response body. */
export interface ConverseResponse {
  output?: { message?: { role?: string; content?: ConverseBlock[] } };
  stopReason?: string;
  usage?: ConverseUsage;
  metrics?: { latencyMs?: number };
  [member: string]: unknown;
}

/**
 * Maps a Converse `stopReason` to OpenAI's `finish_reason`: end_turn/stop_sequence → stop,
 * max_tokens/model_context_window_exceeded → length, tool_use → tool_calls,
 * guardrail_intervened/content_filtered → content_filter.
 */
export function converseFinishReason(reason: string | null | undefined): string | null {
  switch (reason) {
    case null:
    case undefined:
      return null;
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * Maps Converse usage to OpenAI usage: prompt_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens,
 * completion_tokens = outputTokens, total_tokens = totalTokens (else the sum),
 * `prompt_tokens_details: {cached_tokens: cacheReadInputTokens, cache_write_tokens: cacheWriteInputTokens}`.
 */
export function converseUsage(usage: ConverseUsage | undefined): ChatUsage {
  const u = usage ?? {};
  const total = typeof u.totalTokens === 'number' ? u.totalTokens : undefined;
  return openAIUsage(num(u.inputTokens), num(u.outputTokens), num(u.cacheReadInputTokens), num(u.cacheWriteInputTokens), total);
}

/**
 * Maps a Converse response to an OpenAI `chat.completion` with the given `id` and `model`: `{text}` blocks
 * concatenated into `content` (null when none), `reasoningContent` into `reasoning_content`, `{toolUse}` blocks into
 * `tool_calls` (id = toolUseId, arguments = JSON string of `input`), stop reason and usage mapped.
 */
export function fromConverseResponse(response: ConverseResponse, id: string, model: string): ChatCompletion {
  let text = '';
  let hasText = false;
  let reasoning = '';
  const toolCalls: ChatToolCall[] = [];
  for (const block of response.output?.message?.content ?? []) {
    if (typeof block.text === 'string') {
      text += block.text;
      hasText = true;
    } else if (isRecord(block.toolUse)) {
      toolCalls.push({
        id: String(block.toolUse.toolUseId),
        type: 'function',
        function: { name: String(block.toolUse.name), arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    } else if (isRecord(block.reasoningContent) && isRecord(block.reasoningContent.reasoningText)) {
      const t = block.reasoningContent.reasoningText.text;
      if (typeof t === 'string') reasoning += t;
    }
  }
  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: hasText ? text : null };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length) message.tool_calls = toolCalls;
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: converseFinishReason(response.stopReason), logprobs: null }],
    usage: converseUsage(response.usage),
  };
}

// ---------------------------------------------------------------------------------------------
// Embeddings (InvokeModel)
// ---------------------------------------------------------------------------------------------

/** The OpenAI embeddings request members this adapter reads. */
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
  const tokens = num(response.inputTextTokenCount);
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

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * OpenAI error `type` for each Bedrock exception name (lower-camel, as stream `:exception-type` headers carry it;
 * the `x-amzn-ErrorType` header's PascalCase names are normalised to it).
 */
export const BEDROCK_ERROR_TYPES: Readonly<Record<string, string>> = {
  validationException: 'invalid_request_error',
  accessDeniedException: 'permission_error',
  unrecognizedClientException: 'authentication_error',
  resourceNotFoundException: 'not_found_error',
  throttlingException: 'rate_limit_exceeded',
  serviceQuotaExceededException: 'rate_limit_exceeded',
  modelTimeoutException: 'server_error',
  modelErrorException: 'server_error',
  modelNotReadyException: 'server_error',
  modelStreamErrorException: 'server_error',
  internalServerException: 'server_error',
  serviceUnavailableException: 'server_error',
};

/** `ValidationException:http://...` or `com.amazon...#ValidationException` → `ValidationException`; null when empty. */
function exceptionName(raw: unknown): string | null {
  if (typeof raw !== 'string' || !raw) return null;
  const name = raw.split(':')[0]!.split('#').pop()!.trim();
  return name || null;
}

function bedrockErrorType(name: string | null, status: number): string {
  if (name) {
    const key = name.charAt(0).toLowerCase() + name.slice(1);
    const type = BEDROCK_ERROR_TYPES[key];
    if (type) return type;
  }
  return errorTypeForStatus(status);
}

/**
 * Maps a non-2xx Bedrock body (`{"message": "..."}`, sometimes `{"Message": ...}` or with `__type`) to OpenAI's
 * error shape: `code` = the exception name from the `x-amzn-ErrorType` header (when the proxy passes response
 * headers) or the body's `__type`, else null; `type` per {@link BEDROCK_ERROR_TYPES}, else by status.
 */
export function mapBedrockError(
  status: number,
  body: Buffer,
  headers: Record<string, string | string[] | undefined> = {},
): OpenAIErrorBody {
  const parsed = parseJson(body);
  const headerValue = Object.entries(headers).find(([key]) => key.toLowerCase() === 'x-amzn-errortype')?.[1];
  const name = exceptionName(Array.isArray(headerValue) ? headerValue[0] : headerValue) ?? (isRecord(parsed) ? exceptionName(parsed.__type) : null);
  let message: string | undefined;
  if (isRecord(parsed)) {
    const m = parsed.message ?? parsed.Message;
    if (typeof m === 'string' && m) message = m;
  }
  return {
    error: {
      message: message ?? fallbackErrorMessage('bedrock', status, body),
      type: bedrockErrorType(name, status),
      param: null,
      code: name,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Stream mapping
// ---------------------------------------------------------------------------------------------

/** Frames larger than this (bytes) are treated as a corrupt stream. */
export const MAX_EVENTSTREAM_FRAME_BYTES = 16 * 1024 * 1024;

/** What the stream mapper needs from @smithy: the event-stream codec and the UTF-8 helpers it takes. */
interface EventStreamLib {
  EventStreamCodec: typeof EventStreamCodec;
  fromUtf8: (input: string) => Uint8Array;
  toUtf8: (input: Uint8Array | string) => string;
}

let eventStreamLib: EventStreamLib | null = null;

/**
 * Imports `@smithy/eventstream-codec` and `@smithy/util-utf8` once. {@link createBedrockAdapter}'s
 * `buildRequest` starts this for a streaming request, so the codec is in memory before the response
 * arrives; a stream mapper whose first bytes arrive earlier waits for it.
 * @returns the loaded modules (the same object on every call).
 */
export function loadEventStream(): Promise<EventStreamLib> {
  if (eventStreamLib) return Promise.resolve(eventStreamLib);
  return importEventStream();
}

const importEventStream = loadOnce(() =>
  Promise.all([import('@smithy/eventstream-codec'), import('@smithy/util-utf8')]).then(
    ([codec, utf8]) => (eventStreamLib = { EventStreamCodec: codec.EventStreamCodec, fromUtf8: utf8.fromUtf8, toUtf8: utf8.toUtf8 }),
  ),
);

function headerString(headers: Record<string, { type: string; value: unknown }>, name: string): string | undefined {
  const header = headers[name];
  return header && typeof header.value === 'string' ? header.value : undefined;
}

/**
 * A fresh transform from ConverseStream's binary event stream (`application/vnd.amazon.eventstream`) to OpenAI
 * `chat.completion.chunk` SSE bytes. Frames may be split anywhere across input pieces: bytes are buffered until a
 * whole frame (length = first 4 bytes, big-endian) is present, then decoded (CRCs checked) and mapped at once:
 * `messageStart` → role chunk; `contentBlockStart.start.toolUse` → tool-call start (`index` = 0-based position
 * among tool calls, id = toolUseId); `contentBlockDelta` text / `toolUse.input` / `reasoningContent.text` →
 * content / argument fragments / `reasoning_content`; `messageStop` → finish chunk; `metadata` → usage chunk
 * (`choices: []`) and `data: [DONE]`. An `exception` or `error` frame, a corrupt frame, or a stream ending
 * before `messageStop` becomes a final `data: {"error":{...}}` event with no `[DONE]`.
 */
export function createBedrockStreamMapper(call: ProviderCall): Transform {
  let lib = eventStreamLib;
  let codec = lib ? new lib.EventStreamCodec(lib.toUtf8, lib.fromUtf8) : null;
  const writer = new ChunkWriter(`chatcmpl-${call.requestId}`, call.body.model);
  const toolIndexByBlock = new Map<number, number>();
  let pending: Buffer = Buffer.alloc(0);
  let state: 'open' | 'done' | 'failed' = 'open';
  let finished = false;
  let out = '';

  const fail = (error: OpenAIErrorBody) => {
    out += sseError(error);
    state = 'failed';
  };

  const onEvent = (eventType: string | undefined, payload: Record<string, unknown>) => {
    switch (eventType) {
      case 'messageStart':
        out += writer.role();
        break;
      case 'contentBlockStart': {
        const start = isRecord(payload.start) ? payload.start : {};
        if (isRecord(start.toolUse)) {
          const index = toolIndexByBlock.size;
          toolIndexByBlock.set(num(payload.contentBlockIndex), index);
          out += writer.toolStart(index, String(start.toolUse.toolUseId), String(start.toolUse.name));
        }
        break;
      }
      case 'contentBlockDelta': {
        const delta = isRecord(payload.delta) ? payload.delta : {};
        if (typeof delta.text === 'string') {
          if (delta.text) out += writer.content(delta.text);
        } else if (isRecord(delta.toolUse) && typeof delta.toolUse.input === 'string') {
          const index = toolIndexByBlock.get(num(payload.contentBlockIndex));
          if (index !== undefined && delta.toolUse.input) out += writer.toolArguments(index, delta.toolUse.input);
        } else if (isRecord(delta.reasoningContent) && typeof delta.reasoningContent.text === 'string') {
          if (delta.reasoningContent.text) out += writer.reasoning(delta.reasoningContent.text);
        }
        break;
      }
      case 'messageStop':
        if (!finished) out += writer.finish(converseFinishReason(typeof payload.stopReason === 'string' ? payload.stopReason : null) ?? 'stop');
        finished = true;
        break;
      case 'metadata':
        if (!finished) out += writer.finish('stop');
        finished = true;
        out += writer.usage(converseUsage(isRecord(payload.usage) ? (payload.usage as ConverseUsage) : undefined));
        out += SSE_DONE;
        state = 'done';
        break;
      default:
        // contentBlockStop and event types added later carry nothing to forward.
        break;
    }
  };

  const onFrame = (frame: Buffer) => {
    let headers: Record<string, { type: string; value: unknown }>;
    let payload: unknown;
    try {
      const message = codec!.decode(frame);
      headers = message.headers as Record<string, { type: string; value: unknown }>;
      payload = message.body.byteLength ? JSON.parse(lib!.toUtf8(message.body)) : {};
    } catch {
      fail({ error: { message: 'bedrock sent a malformed event-stream frame', type: 'server_error', param: null, code: 'upstream_bad_event' } });
      return;
    }
    const messageType = headerString(headers, ':message-type') ?? 'event';
    const body = isRecord(payload) ? payload : {};
    if (messageType === 'event') {
      onEvent(headerString(headers, ':event-type'), body);
    } else if (messageType === 'exception') {
      const name = exceptionName(headerString(headers, ':exception-type'));
      const message = typeof body.message === 'string' ? body.message : typeof body.Message === 'string' ? body.Message : `bedrock stream exception ${name ?? ''}`.trim();
      fail({ error: { message, type: bedrockErrorType(name, 500), param: null, code: name } });
    } else {
      const code = headerString(headers, ':error-code') ?? null;
      const message = headerString(headers, ':error-message') ?? 'bedrock stream error';
      fail({ error: { message, type: bedrockErrorType(code, 500), param: null, code } });
    }
  };

  const drain = (stream: Transform) => {
    if (out) {
      stream.push(out);
      out = '';
    }
  };

  const consume = (stream: Transform, chunk: Buffer) => {
    if (state === 'open') {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (state === 'open' && pending.length >= 4) {
        const total = pending.readUInt32BE(0);
        if (total < 16 || total > MAX_EVENTSTREAM_FRAME_BYTES) {
          fail({ error: { message: 'bedrock sent a malformed event-stream frame', type: 'server_error', param: null, code: 'upstream_bad_event' } });
          break;
        }
        if (pending.length < total) break;
        const frame = pending.subarray(0, total);
        pending = pending.subarray(total);
        onFrame(frame);
      }
      if (state !== 'open') pending = Buffer.alloc(0);
    }
    drain(stream);
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (codec || state !== 'open') {
        consume(this, chunk);
        callback();
        return;
      }
      // The codec is not loaded yet (buildRequest normally loaded it): wait for it; the stream holds
      // further chunks until the callback.
      loadEventStream().then(
        (loaded) => {
          lib = loaded;
          codec = new loaded.EventStreamCodec(loaded.toUtf8, loaded.fromUtf8);
          consume(this, chunk);
          callback();
        },
        (err: unknown) => {
          fail({ error: { message: `bedrock stream cannot be decoded: ${(err as Error)?.message ?? String(err)}`, type: 'server_error', param: null, code: 'upstream_bad_event' } });
          drain(this);
          callback();
        },
      );
    },
    flush(callback) {
      if (state === 'open') {
        if (finished && pending.length === 0) {
          out += SSE_DONE;
          state = 'done';
        } else {
          fail(truncatedStreamError('bedrock'));
        }
      }
      drain(this);
      callback();
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Signing and the adapter
// ---------------------------------------------------------------------------------------------

/** Imports `@smithy/signature-v4` and `@smithy/hash-node` once (on the first signed request). */
const loadSigner = loadOnce(() =>
  Promise.all([import('@smithy/signature-v4'), import('@smithy/hash-node')]).then(([sigv4, hash]) => ({ SignatureV4: sigv4.SignatureV4, Hash: hash.Hash })),
);

/**
 * Signs a request for the `bedrock` service with SigV4 and returns the headers to send: the given headers plus
 * `host`, `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` (with a session token) and `authorization`
 * (`AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/bedrock/aws4_request, SignedHeaders=..., Signature=...`).
 * The URL path is signed as sent (already percent-encoded), which SigV4 encodes once more, as the AWS SDKs do.
 */
export async function signBedrockRequest(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  credentials: AwsCredentials,
  region: string,
  signingDate: Date = new Date(),
): Promise<Record<string, string>> {
  const { SignatureV4, Hash } = await loadSigner();
  const signer = new SignatureV4({ service: 'bedrock', region, credentials, sha256: Hash.bind(null, 'sha256') });
  const query: Record<string, string> = {};
  url.searchParams.forEach((value, key) => {
    query[key] = value;
  });
  const signed = await signer.sign(
    {
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query,
      headers: { ...headers, host: url.host },
      body,
    },
    { signingDate },
  );
  const result: Record<string, string> = {};
  for (const [key, value] of Object.entries(signed.headers)) if (typeof value === 'string') result[key] = value;
  return result;
}

/** Options of {@link createBedrockAdapter}. */
export interface BedrockAdapterOptions {
  /**
   * Where AWS settings are read on each request: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`
   * (SigV4), `AWS_BEARER_TOKEN_BEDROCK` (a Bedrock API key, used when no access key is set), `AWS_REGION` /
   * `AWS_DEFAULT_REGION` (when `providers.bedrock.region` is unset). Default `process.env`.
   */
  env?: AwsEnv;
  /** The signing clock (tests pin it). Default `() => new Date()`. */
  now?: () => Date;
}

/**
 * Builds a Bedrock provider adapter. Chat: `POST https://bedrock-runtime.{region}.amazonaws.com/model/{modelId}/converse`
 * (`/converse-stream` when streaming), model id URL-encoded, body from {@link toConverseRequest}, signed with SigV4.
 * Embeddings: `POST .../model/{modelId}/invoke` with {@link toBedrockEmbeddingsRequest}. A non-empty
 * `providers.bedrock.base-url` replaces the regional host. Region: `providers.bedrock.region`, else `AWS_REGION`,
 * else `AWS_DEFAULT_REGION`.
 * `buildRequest` throws GatewayError 500 `provider_not_configured` when the region or the credentials are missing,
 * 400 for bodies Converse cannot express.
 */
export function createBedrockAdapter(options: BedrockAdapterOptions = {}): ProviderAdapter {
  const env = options.env ?? process.env;
  const now = options.now ?? (() => new Date());
  return {
    name: 'bedrock',
    passthrough: false,
    endpoints: ['chat', 'embeddings'],

    async buildRequest(call: ProviderCall, endpoint: Endpoint): Promise<UpstreamRequest> {
      const { config } = call;
      const region = config.region || env.AWS_REGION || env.AWS_DEFAULT_REGION;
      if (!region) {
        throw new GatewayError(
          500,
          'The bedrock provider has no region: set providers.bedrock.region or AWS_REGION',
          'server_error',
          'provider_not_configured',
        );
      }
      const credentials = awsCredentialsFromEnv(env);
      const bearer = env.AWS_BEARER_TOKEN_BEDROCK;
      if (!credentials && !bearer) {
        throw new GatewayError(
          500,
          'The bedrock provider has no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK)',
          'server_error',
          'provider_not_configured',
        );
      }
      const base = config.baseUrl ? config.baseUrl.replace(/\/+$/, '') : `https://bedrock-runtime.${region}.amazonaws.com`;
      const modelId = call.body.model;
      let action: string;
      let payload: unknown;
      if (endpoint === 'embeddings') {
        action = 'invoke';
        payload = toBedrockEmbeddingsRequest(call.body as unknown as EmbeddingsRequest);
      } else {
        action = call.stream ? 'converse-stream' : 'converse';
        payload = toConverseRequest(call.body);
      }
      // The stream mapper needs the event-stream codec: load it now, while the request is under way.
      if (action === 'converse-stream') loadEventStream().catch(() => {});
      const url = new URL(`${base}/model/${encodeURIComponent(modelId)}/${action}`);
      const body = Buffer.from(JSON.stringify(payload));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: action === 'converse-stream' ? 'application/vnd.amazon.eventstream' : 'application/json',
        // The mappers read the bytes, so they must arrive uncompressed.
        'accept-encoding': 'identity',
      };
      if (credentials) {
        return { url, method: 'POST', headers: await signBedrockRequest(url, body, headers, credentials, region, now()), body };
      }
      return { url, method: 'POST', headers: { ...headers, authorization: `Bearer ${bearer}` }, body };
    },

    mapResponse(body: Buffer, call: ProviderCall, endpoint: Endpoint): MappedResponse {
      const parsed = parseJson(body);
      if (!isRecord(parsed)) {
        return {
          status: 502,
          body: { error: { message: 'bedrock returned a response that is not JSON', type: 'server_error', param: null, code: 'upstream_bad_response' } },
        };
      }
      if (endpoint === 'embeddings') return { status: 200, body: fromBedrockEmbeddings(parsed, call.body as unknown as EmbeddingsRequest) };
      return { status: 200, body: fromConverseResponse(parsed as ConverseResponse, `chatcmpl-${call.requestId}`, call.body.model) };
    },

    createStreamMapper: createBedrockStreamMapper,

    mapError: mapBedrockError,
  };
}

/**
 * The Bedrock provider, reading AWS credentials and region from `process.env` on each request
 * (see {@link createBedrockAdapter}).
 * Source: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 */
export const bedrock: ProviderAdapter = createBedrockAdapter();
