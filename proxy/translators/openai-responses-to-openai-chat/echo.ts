/**
 * The Responses `response` object around the output: its identity, status and usage, and the request parameters
 * OpenAI echoes in it (the SDKs and clients read `tools`, `tool_choice`, `text`, `reasoning`, `parallel_tool_calls`,
 * `temperature`, `top_p`, `max_output_tokens`, `instructions`, `metadata`, `store` back from the response). Members
 * come in the order of OpenAI's recorded responses (test/fixtures/providers/openai/responses-*.json; `billing`, OpenAI's
 * account detail, is left out), with OpenAI's defaults where the request left a member out (`frequency_penalty` and
 * `presence_penalty` 0, which a Responses request cannot set; `temperature` 1, `top_p` 1, `tool_choice` `auto`, `truncation`
 * `disabled`, `store` true, `text.format` `{type: "text"}`, `verbosity` `medium`, `service_tier` `default`).
 * `tools` echoes the tools that were sent (functions, custom tools, namespaces as the client wrote them), not the hosted
 * tools the translator removed. `previous_response_id` is null: the conversation reached the provider whole.
 * Source: https://platform.openai.com/docs/api-reference/responses/object.
 */
import { isRecord } from '../shared/values.ts';

/** The request parameters a response echoes, computed once per request. */
export type ResponseEcho = Readonly<Record<string, unknown>>;

function orDefault(value: unknown, fallback: unknown): unknown {
  return value === undefined || value === null ? fallback : value;
}

/** The echoed parameters of a Responses request body (untrusted JSON, already translated, so well-formed where read). */
export function responseEcho(body: unknown): ResponseEcho {
  const r = isRecord(body) ? body : {};
  const reasoning = isRecord(r.reasoning) ? r.reasoning : {};
  const text = isRecord(r.text) ? r.text : {};
  const tools = Array.isArray(r.tools) ? r.tools.filter((t) => isRecord(t) && (t.type === 'function' || t.type === 'custom' || t.type === 'namespace')) : [];
  return {
    instructions: orDefault(r.instructions, null),
    max_output_tokens: orDefault(r.max_output_tokens, null),
    max_tool_calls: orDefault(r.max_tool_calls, null),
    parallel_tool_calls: orDefault(r.parallel_tool_calls, true),
    previous_response_id: null,
    prompt_cache_key: orDefault(r.prompt_cache_key, null),
    prompt_cache_retention: orDefault(r.prompt_cache_retention, null),
    reasoning: { effort: orDefault(reasoning.effort, null), summary: orDefault(reasoning.summary, null) },
    safety_identifier: orDefault(r.safety_identifier, null),
    service_tier: 'default',
    store: orDefault(r.store, true),
    temperature: orDefault(r.temperature, 1),
    text: { format: orDefault(text.format, { type: 'text' }), verbosity: orDefault(text.verbosity, 'medium') },
    tool_choice: orDefault(r.tool_choice, 'auto'),
    tools,
    top_logprobs: orDefault(r.top_logprobs, 0),
    top_p: orDefault(r.top_p, 1),
    truncation: orDefault(r.truncation, 'disabled'),
    user: orDefault(r.user, null),
    metadata: orDefault(r.metadata, {}),
  };
}

/** Why a response stopped early (`incomplete_details.reason`). */
export type IncompleteReason = 'max_output_tokens' | 'content_filter';

/** The state of a response object: what changes between `response.created` and `response.completed`. */
export interface ResponseState {
  id: string;
  /** Unix time in seconds. */
  createdAt: number;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  /** Unix time in seconds, when completed. */
  completedAt: number | null;
  error: { code: string; message: string } | null;
  incomplete: IncompleteReason | null;
  model: string;
  output: unknown[];
  usage: unknown;
}

/** The `response` object of a state and the request's echo, members in OpenAI's order. */
export function responseObject(s: ResponseState, echo: ResponseEcho): Record<string, unknown> {
  return {
    id: s.id,
    object: 'response',
    created_at: s.createdAt,
    status: s.status,
    background: false,
    completed_at: s.completedAt,
    error: s.error,
    frequency_penalty: 0,
    incomplete_details: s.incomplete ? { reason: s.incomplete } : null,
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    max_tool_calls: echo.max_tool_calls,
    model: s.model,
    output: s.output,
    parallel_tool_calls: echo.parallel_tool_calls,
    presence_penalty: 0,
    previous_response_id: echo.previous_response_id,
    prompt_cache_key: echo.prompt_cache_key,
    prompt_cache_retention: echo.prompt_cache_retention,
    reasoning: echo.reasoning,
    safety_identifier: echo.safety_identifier,
    service_tier: echo.service_tier,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_logprobs: echo.top_logprobs,
    top_p: echo.top_p,
    truncation: echo.truncation,
    usage: s.usage,
    user: echo.user,
    metadata: echo.metadata,
  };
}
