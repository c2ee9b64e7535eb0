/**
 * AWS Bedrock's wire formats: the Converse request / response / usage shapes translators write and read, and
 * Bedrock's error vocabulary (exception names, from the `x-amzn-ErrorType` header of HTTP errors, a body's
 * `__type`, or a stream frame's `:exception-type`), used by the Bedrock transport and the stream translator.
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_OutputConfig.html (structured output),
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ServiceTier.html,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html.
 */
import { errorTypeForStatus } from '../shared/provider-errors.ts';

/** One Converse content block (`{text}`, `{image}`, `{document}`, `{toolUse}`, `{toolResult}`, `{cachePoint}`, ...). */
export type ConverseBlock = Record<string, unknown>;

/** A Converse cache checkpoint: the prompt up to it may be cached (a content block, a system block, or a tool list entry). */
export const CACHE_POINT = { cachePoint: { type: 'default' } } as const;

/** One entry of `toolConfig.tools`: a tool's specification, or a cache checkpoint after the tools before it. */
export type ConverseTool = { toolSpec: { name: string; description?: string; inputSchema: { json: unknown } } } | typeof CACHE_POINT;

/** Converse's `outputConfig.textFormat`: the answer's text is JSON following `schema` (a JSON Schema, serialized). */
export interface ConverseTextFormat {
  type: 'json_schema';
  structure: { jsonSchema: { schema: string; name?: string; description?: string } };
}

/** Converse's processing tiers (`serviceTier.type`). */
export type ConverseServiceTier = 'priority' | 'default' | 'flex' | 'reserved';

/** The body of `POST /model/{modelId}/converse` (and `/converse-stream`) as the gateway's translators build it. */
export interface ConverseRequest {
  messages: Array<{ role: 'user' | 'assistant'; content: ConverseBlock[] }>;
  system?: ConverseBlock[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: {
    tools: ConverseTool[];
    toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
  };
  outputConfig?: { textFormat: ConverseTextFormat };
  serviceTier?: { type: ConverseServiceTier };
}

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
 * The neutral error `type` of each Bedrock exception name (lower-camel, as stream `:exception-type` headers
 * carry it; the `x-amzn-ErrorType` header's PascalCase names are normalised to it).
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
export function exceptionName(raw: unknown): string | null {
  if (typeof raw !== 'string' || !raw) return null;
  const name = raw.split(':')[0]!.split('#').pop()!.trim();
  return name || null;
}

/** The neutral error type of a Bedrock exception name per {@link BEDROCK_ERROR_TYPES}; by `status` when unnamed or unknown. */
export function bedrockErrorType(name: string | null, status: number): string {
  if (name) {
    const key = name.charAt(0).toLowerCase() + name.slice(1);
    // Own keys only: the provider names the exception, and "Constructor" or "__proto__" is an unknown name, not Object.prototype's member.
    if (Object.hasOwn(BEDROCK_ERROR_TYPES, key)) return BEDROCK_ERROR_TYPES[key]!;
  }
  return errorTypeForStatus(status);
}
