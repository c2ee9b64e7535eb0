/**
 * Maps a stored `request_log` row to the REST API's `SvcRequest` shape
 * (test/fixtures/reference/rest-api-openapi.json, components.schemas.SvcRequest), including `llmSchema`
 * built from the request and response bodies in the client's dialect: OpenAI chat completions
 * here, Anthropic Messages in ./llm-schema-messages.ts.
 */
import { PROVIDERS, isProviderName } from '../../../shared/providers.ts';
import { isMessagesResponse, messagesRequestSchema, messagesResponseSchema } from './llm-schema-messages.ts';
import { isResponsesResponse, responsesRequestSchema, responsesResponseSchema } from './llm-schema-responses.ts';

/** The `request_log` columns the mapping reads. */
export interface RequestRow {
  id: string;
  created_at: Date;
  response_created_at: Date | null;
  path: string;
  target_url: string | null;
  provider: string;
  request_model: string | null;
  response_model: string | null;
  model_override: string | null;
  user_id: string | null;
  properties: Record<string, string>;
  status: number;
  delay_ms: number | null;
  time_to_first_token: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  reasoning_tokens: number | null;
  prompt_cache_read_tokens: number | null;
  prompt_cache_write_tokens: number | null;
  prompt_audio_tokens: number | null;
  completion_audio_tokens: number | null;
  cost_usd: number | null;
  /** Why `cost_usd` is null although tokens were counted (admin/ingest.ts COST_NOTES); null otherwise and on older rows. */
  cost_note?: string | null;
  /** The request asked for the response cache (`Svc-Cache-Enabled: true`); absent on rows read without it. */
  cache_enabled?: boolean | null;
  /** A cache hit: the request whose answer was served; null otherwise. */
  cache_reference_id?: string | null;
  /** A cache hit: what its answer would have cost at the provider (USD); null otherwise. */
  cost_saved_usd?: number | null;
  /** The request's session (`Svc-Session-Id`, else Claude Code's `x-claude-code-session-id` or Codex's); null when it named none. */
  session_id?: string | null;
  /** The request's `Svc-Session-Path` (a `/`-separated trace path); null when not sent. */
  session_path?: string | null;
  /** The request's `Svc-Session-Name`; null when not sent. */
  session_name?: string | null;
  /** The user's feedback on the request (`POST /v1/request/{id}/feedback`): its id, null without one. */
  feedback_id?: string | null;
  /** The feedback's rating: true thumbs up, false thumbs down; null without feedback. */
  feedback_rating?: boolean | null;
  /** When the rating was last given; null without feedback. */
  feedback_created_at?: Date | null;
  prompt_id: string | null;
  prompt_version: string | null;
  request_body: unknown;
  response_body: unknown;
  error: unknown;
  /** `provider` or `estimated` (js-tiktoken-compatible count when the provider sent no usage). */
  tokens_source?: string | null;
  /**
   * Gateway facts (jsonb): attempts, endpoint kind, token-limit outcome, client-closed flag, and
   * for translated requests the removed members and the wire format.
   */
  extra?: Record<string, unknown> | null;
  updated_at: Date;
  scores?: Record<string, number> | null;
}

type Json = Record<string, unknown>;

function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === 'object' && typeof (p as Json).text === 'string' ? ((p as Json).text as string) : ''))
      .join('');
  }
  return undefined;
}

/** Maps one OpenAI chat message to the reference `Message` shape (`_type` message | functionCall | image | contentArray). */
export function toSchemaMessage(m: Json): Json {
  const out: Json = { _type: 'message', role: typeof m.role === 'string' ? m.role : 'user' };
  if (typeof m.name === 'string') out.name = m.name;
  if (typeof m.tool_call_id === 'string') out.tool_call_id = m.tool_call_id;
  if (Array.isArray(m.content)) {
    out._type = 'contentArray';
    out.contentArray = (m.content as Json[]).map((p) => {
      if (p?.type === 'image_url') {
        const url = (p.image_url as Json | undefined)?.url;
        return { _type: 'image', role: out.role, image_url: typeof url === 'string' ? url : undefined };
      }
      return { _type: 'message', role: out.role, content: typeof p?.text === 'string' ? p.text : '' };
    });
    out.content = contentText(m.content);
  } else if (typeof m.content === 'string') {
    out.content = m.content;
  }
  if (typeof m.reasoning_content === 'string') out.reasoning = m.reasoning_content;
  else if (typeof m.reasoning === 'string') out.reasoning = m.reasoning;
  if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) {
    out._type = 'functionCall';
    out.tool_calls = (m.tool_calls as unknown[]).filter((tc): tc is Json => !!tc && typeof tc === 'object').map((tc) => {
      const fn = (tc.function ?? {}) as Json;
      let args: unknown = {};
      try {
        args = typeof fn.arguments === 'string' && fn.arguments ? JSON.parse(fn.arguments) : {};
      } catch {
        args = { raw: fn.arguments };
      }
      return { id: tc.id, name: fn.name, arguments: args };
    });
  }
  return out;
}

const REQUEST_SCALARS = [
  'temperature',
  'top_p',
  'seed',
  'stream',
  'presence_penalty',
  'frequency_penalty',
  'stop',
  'reasoning_effort',
  'verbosity',
  'parallel_tool_calls',
  'n',
  'instructions',
  'prompt',
  'input',
] as const;

/**
 * True when a row's bodies are Anthropic Messages: its endpoint kind says so (`extra.endpoint`), or,
 * for a row without it, the response is a Messages `message`.
 */
function isMessagesRow(row: Pick<RequestRow, 'response_body' | 'extra'>): boolean {
  const endpoint = row.extra?.endpoint;
  return endpoint === 'messages' || (endpoint === undefined && isMessagesResponse(row.response_body));
}

/** Builds `llmSchema` from the stored bodies; null when the request body is not an object. */
export function toLlmSchema(row: Pick<RequestRow, 'request_body' | 'response_body' | 'error' | 'response_model' | 'provider' | 'extra'>): Json | null {
  const req = row.request_body as Json | null;
  if (!req || typeof req !== 'object' || Array.isArray(req)) return null;
  if (isMessagesRow(row)) {
    const res = row.response_body;
    let response: Json | null = isMessagesResponse(res) ? messagesResponseSchema(res, row.response_model) : null;
    if (row.error !== null && row.error !== undefined) response = { ...(response ?? { model: row.response_model }), error: { svcMessage: row.error } };
    return { request: messagesRequestSchema(req, row.provider), response };
  }
  if (row.extra?.endpoint === 'responses') {
    const res = row.response_body;
    let response: Json | null = isResponsesResponse(res) ? responsesResponseSchema(res, row.response_model) : null;
    if (row.error !== null && row.error !== undefined) response = { ...(response ?? { model: row.response_model }), error: { svcMessage: row.error } };
    return { request: responsesRequestSchema(req, row.provider), response };
  }
  const request: Json = { llm_type: Array.isArray(req.messages) ? 'chat' : 'completion', provider: row.provider };
  if (typeof req.model === 'string') request.model = req.model;
  if (Array.isArray(req.messages)) request.messages = (req.messages as Json[]).filter((m) => m && typeof m === 'object').map(toSchemaMessage);
  const maxTokens = req.max_completion_tokens ?? req.max_tokens;
  if (typeof maxTokens === 'number') request.max_tokens = maxTokens;
  for (const k of REQUEST_SCALARS) if (req[k] !== undefined) request[k] = req[k];
  if (Array.isArray(req.tools)) {
    request.tools = (req.tools as unknown[]).filter((t): t is Json => !!t && typeof t === 'object').map((t) => {
      const fn = (t.function ?? {}) as Json;
      return { name: fn.name ?? t.name, description: fn.description ?? '', parameters: fn.parameters ?? {} };
    });
  }
  if (req.tool_choice !== undefined) {
    const tc = req.tool_choice;
    if (typeof tc === 'string') request.tool_choice = { type: tc === 'required' ? 'any' : tc };
    else if (tc && typeof tc === 'object') request.tool_choice = { type: 'tool', name: ((tc as Json).function as Json | undefined)?.name };
  }
  if (req.response_format && typeof req.response_format === 'object') request.response_format = req.response_format;

  let response: Json | null = null;
  const res = row.response_body as Json | null;
  if (res && typeof res === 'object' && Array.isArray(res.choices)) {
    response = {
      model: typeof res.model === 'string' ? res.model : row.response_model,
      messages: (res.choices as Json[]).map((c) => toSchemaMessage(((c?.message ?? {}) as Json) ?? {})),
    };
  }
  if (row.error !== null && row.error !== undefined) {
    response = { ...(response ?? { model: row.response_model }), error: { svcMessage: row.error } };
  }
  return { request, response };
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/**
 * The request's properties as shown over REST: the caller's `Svc-Property-*` values plus what the
 * gateway did, under reserved `svc-` names (the reference shape has no other place for them):
 * `svc-attempts` (JSON: every provider attempt with status and latency ms; the last one answered),
 * `svc-token-limit-handler`, `svc-token-limit-tokens-before`, `svc-token-limit-tokens-after`,
 * `svc-token-limit-model-sent`, `svc-token-limit-skipped`, `svc-client-closed`,
 * `svc-tokens-source` (`provider` when the provider reported usage, `estimated` when counted here),
 * `svc-endpoint` (the endpoint kind: `chat`, `embeddings`, `messages`, `responses`),
 * `svc-session-id` (the request's session: `Svc-Session-Id`, else the client's own, e.g. Claude
 * Code's `x-claude-code-session-id`), `svc-session-path` and `svc-session-name` (its
 * `Svc-Session-Path` and `Svc-Session-Name`),
 * `svc-cost-note` (why `cost` is null although tokens were counted, e.g. `unknown model price: ...`),
 * `svc-removed-members` (JSON: the request members a translator removed),
 * `svc-wire-format` (the provider's wire format) and `svc-cache-write-1h-tokens` (the part of
 * `prompt_cache_write_tokens` written with Anthropic's 1-hour TTL), and on a response-cache hit
 * `svc-cache-cost-saved` (USD: what the served answer would have cost at the provider; the hit's `cost` is 0).
 */
export function shownProperties(
  row: Pick<RequestRow, 'properties' | 'extra' | 'tokens_source' | 'session_id' | 'cost_note'> & { cost_saved_usd?: number | null } & Pick<RequestRow, 'session_path' | 'session_name'>,
): Record<string, string> {
  const out: Record<string, string> = { ...(row.properties ?? {}) };
  const extra = row.extra ?? {};
  const attempts = extra.attempts as unknown[] | undefined;
  if (Array.isArray(attempts) && attempts.length > 0) out['svc-attempts'] = JSON.stringify(attempts);
  const tl = extra.tokenLimit as Record<string, unknown> | undefined;
  if (tl) {
    out['svc-token-limit-handler'] = String(tl.handler);
    if (tl.tokensBefore !== null && tl.tokensBefore !== undefined) out['svc-token-limit-tokens-before'] = String(tl.tokensBefore);
    if (tl.tokensAfter !== null && tl.tokensAfter !== undefined) out['svc-token-limit-tokens-after'] = String(tl.tokensAfter);
    out['svc-token-limit-model-sent'] = String(tl.modelSent);
    if (tl.skipped) out['svc-token-limit-skipped'] = String(tl.skipped);
  }
  if (extra.clientClosed === true) out['svc-client-closed'] = 'true';
  if (row.tokens_source) out['svc-tokens-source'] = row.tokens_source;
  if (typeof extra.endpoint === 'string') out['svc-endpoint'] = extra.endpoint;
  if (row.session_id) out['svc-session-id'] = row.session_id;
  if (row.session_path) out['svc-session-path'] = row.session_path;
  if (row.session_name) out['svc-session-name'] = row.session_name;
  if (row.cost_note) out['svc-cost-note'] = row.cost_note;
  if (Array.isArray(extra.removedMembers) && extra.removedMembers.length > 0) out['svc-removed-members'] = JSON.stringify(extra.removedMembers);
  if (typeof extra.wireFormat === 'string') out['svc-wire-format'] = extra.wireFormat;
  if (typeof extra.cacheWrite1hTokens === 'number') out['svc-cache-write-1h-tokens'] = String(extra.cacheWrite1hTokens);
  if (typeof row.cost_saved_usd === 'number') out['svc-cache-cost-saved'] = String(row.cost_saved_usd);
  return out;
}

/**
 * Per endpoint kind, the wire formats (as the providers' `wireFormats` name them) that carry the
 * client's body as it is (Bedrock's InvokeModel carries a Messages body, a framing change only),
 * and the mapping's name when another one was spoken.
 */
const DIALECT_WIRE: Record<string, { wires: readonly string[]; mapping: string }> = {
  chat: { wires: ['openai-chat'], mapping: 'OPENAI' },
  embeddings: { wires: ['openai-embeddings'], mapping: 'OPENAI' },
  messages: { wires: ['anthropic-messages', 'bedrock-invoke'], mapping: 'ANTHROPIC' },
  responses: { wires: ['openai-responses'], mapping: 'OPENAI_RESPONSES' },
};

/**
 * `ai_gateway_body_mapping`: the client dialect whose body the gateway mapped to another wire
 * format (`OPENAI`, `ANTHROPIC`, `OPENAI_RESPONSES`), null when it passed the body through. From
 * the record's wire format when known; older rows: chat bodies sent to Anthropic or Bedrock were mapped.
 */
function bodyMapping(row: RequestRow): string | null {
  const endpoint = typeof row.extra?.endpoint === 'string' ? row.extra.endpoint : 'chat';
  const dialect = DIALECT_WIRE[endpoint] ?? DIALECT_WIRE.chat!;
  const wire = row.extra?.wireFormat;
  if (typeof wire === 'string') return dialect.wires.includes(wire) ? null : dialect.mapping;
  if (endpoint === 'messages') return row.provider === 'anthropic' ? null : dialect.mapping;
  return row.provider === 'anthropic' || row.provider === 'bedrock' ? 'OPENAI' : null;
}

/** Maps a stored row to `SvcRequest`. */
export function toSvcRequest(row: RequestRow): Json {
  const providerLog = isProviderName(row.provider) ? PROVIDERS[row.provider].logName : row.provider;
  const res = row.response_body as Json | null;
  return {
    response_id: res && typeof res === 'object' && typeof res.id === 'string' ? res.id : null,
    response_created_at: iso(row.response_created_at),
    response_body: row.response_body ?? null,
    response_status: row.status,
    response_model: row.response_model,
    request_id: row.id,
    request_created_at: row.created_at.toISOString(),
    request_body: row.request_body ?? null,
    request_path: row.path,
    request_user_id: row.user_id,
    request_properties: shownProperties(row),
    request_model: row.request_model,
    model_override: row.model_override,
    svc_user: row.user_id,
    provider: providerLog,
    delay_ms: row.delay_ms,
    time_to_first_token: row.time_to_first_token,
    total_tokens: row.total_tokens,
    prompt_tokens: row.prompt_tokens,
    prompt_cache_write_tokens: row.prompt_cache_write_tokens,
    prompt_cache_read_tokens: row.prompt_cache_read_tokens,
    completion_tokens: row.completion_tokens,
    reasoning_tokens: row.reasoning_tokens,
    prompt_audio_tokens: row.prompt_audio_tokens,
    completion_audio_tokens: row.completion_audio_tokens,
    cost: row.cost_usd,
    costUSD: row.cost_usd,
    prompt_id: row.prompt_id,
    prompt_version: row.prompt_version,
    feedback_created_at: iso(row.feedback_created_at ?? null),
    feedback_id: row.feedback_id ?? null,
    feedback_rating: row.feedback_rating ?? null,
    llmSchema: toLlmSchema({ ...row, provider: providerLog }),
    country_code: null,
    asset_ids: null,
    asset_urls: null,
    scores: row.scores ?? {},
    properties: shownProperties(row),
    assets: [],
    target_url: row.target_url ?? '',
    model: row.response_model ?? row.request_model ?? '',
    cache_reference_id: row.cache_reference_id ?? null,
    cache_enabled: row.cache_enabled === true,
    updated_at: row.updated_at.toISOString(),
    ai_gateway_body_mapping: bodyMapping(row),
  };
}
