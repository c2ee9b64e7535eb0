/**
 * The log record the proxy hands to admin for each request, and its superstruct schema (admin
 * validates every record it receives). Times are epoch milliseconds; durations are ms; token counts
 * are tokens. Bodies are the client's request body and the response body (a `chat.completion`
 * assembled from the stream when streamed), each capped in size by the proxy.
 */
import {
  any,
  array,
  boolean,
  literal,
  nullable,
  number,
  object,
  optional,
  record,
  string,
  type,
  union,
  type Infer,
} from 'superstruct';

const UsageSchema = type({
  prompt_tokens: optional(nullable(number())),
  completion_tokens: optional(nullable(number())),
  total_tokens: optional(nullable(number())),
  prompt_tokens_details: optional(nullable(type({ cached_tokens: optional(nullable(number())), cache_write_tokens: optional(nullable(number())), audio_tokens: optional(nullable(number())) }))),
  completion_tokens_details: optional(nullable(type({ reasoning_tokens: optional(nullable(number())), audio_tokens: optional(nullable(number())) }))),
});

/** One attempt at a provider (routers may try several): provider name, HTTP status (0 = no response), latency ms. */
export const AttemptSchema = object({
  provider: string(),
  status: number(),
  latencyMs: number(),
  error: optional(nullable(string())),
});

/** Superstruct schema of {@link LogRecord}. */
export const LogRecordSchema = object({
  requestId: string(),
  organizationId: string(),
  apiKeyId: nullable(string()),
  createdAt: number(),
  responseCreatedAt: nullable(number()),
  path: string(),
  targetUrl: nullable(string()),
  /** Provider config name (`openai`); admin stores the upper-case log name. */
  provider: string(),
  /** The model as the client wrote it (e.g. `openai/gpt-4o-mini`). */
  requestModel: nullable(string()),
  /** The bare model sent to the provider. */
  modelSent: nullable(string()),
  modelOverride: nullable(string()),
  userId: nullable(string()),
  properties: record(string(), string()),
  status: number(),
  streamed: boolean(),
  delayMs: number(),
  timeToFirstTokenMs: nullable(number()),
  requestBody: any(),
  responseBody: any(),
  /** True when a body was larger than the proxy's capture cap and was cut. */
  bodyTruncated: boolean(),
  usage: nullable(UsageSchema),
  /** A provider or gateway error, kept as `llmSchema.response.error.svcMessage`. */
  error: nullable(string()),
  clientClosed: boolean(),
  prompt: nullable(
    object({
      promptId: string(),
      versionId: string(),
      version: string(),
      environment: nullable(string()),
      inputs: record(string(), any()),
    }),
  ),
  tokenLimit: nullable(
    object({
      handler: string(),
      tokensBefore: nullable(number()),
      tokensAfter: nullable(number()),
      allowedInput: nullable(number()),
      modelSent: string(),
      skipped: nullable(string()),
    }),
  ),
  attempts: array(AttemptSchema),
  endpoint: union([literal('chat'), literal('embeddings')]),
});

/** One request's log record, as sent from proxy to admin. */
export type LogRecord = Infer<typeof LogRecordSchema>;
