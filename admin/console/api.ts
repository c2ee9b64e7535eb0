/**
 * The console's typed client of admin's `/v1` REST API. Every call sends the signed-in key as
 * `Authorization: Bearer`; a failure becomes an {@link ApiError} carrying the `error` text of the
 * `{"data": null, "error": "..."}` envelope, which the pages show in the error banner.
 * Most routes answer in the envelope; the prompt-2025 routes answer bare (as the reference API does).
 */
import type { FilterNode } from './filters.ts';

/** A REST failure: the HTTP status (0 when the network failed) and the server's message. */
export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** One logged request as `GET /v1/request/:id` and `POST /v1/request/query` return it (the members the console reads). */
export interface SvcRequest {
  request_id: string;
  request_created_at: string;
  response_created_at: string | null;
  /** When admin stored the request (ISO-8601, ms): the ingestion order, after the request ended. */
  updated_at: string;
  request_path: string;
  request_body: unknown;
  response_body: unknown;
  response_status: number;
  request_model: string | null;
  response_model: string | null;
  model: string;
  provider: string;
  request_user_id: string | null;
  properties: Record<string, string>;
  delay_ms: number | null;
  time_to_first_token: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  reasoning_tokens: number | null;
  prompt_cache_read_tokens: number | null;
  prompt_cache_write_tokens: number | null;
  cost: number | null;
  scores: Record<string, number>;
  prompt_id: string | null;
  prompt_version: string | null;
  llmSchema: LlmSchema | null;
  /** True when the request was sent with `Svc-Cache-Enabled: true`. */
  cache_enabled: boolean;
  /** Set on a cache hit: the request whose answer was served. */
  cache_reference_id: string | null;
  /** The user's thumbs up (true) or down (false); null when none was given. */
  feedback_rating: boolean | null;
  feedback_id: string | null;
  feedback_created_at: string | null;
}

/** One session's figures (`POST /v1/session/query`); tokens in tokens, cost in USD. */
export interface SessionSummary {
  session_id: string;
  session_name: string | null;
  first_request_at: string;
  last_request_at: string;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost: number;
  /** Requests answered with a status >= 400 or none (0). */
  errors: number;
}

/** One request of a session (`GET /v1/session/{id}`), in time order. */
export interface SessionRequest {
  request_id: string;
  request_created_at: string;
  /** Its `Svc-Session-Path` (`/plan/search`); null when not sent. */
  session_path: string | null;
  session_name: string | null;
  request_path: string;
  provider: string;
  model: string | null;
  user_id: string | null;
  status: number;
  latency_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost: number | null;
}

/** A session's figures and one page of its requests. */
export interface SessionDetail extends SessionSummary {
  requests: SessionRequest[];
}

/** The dialect-neutral view of a request's bodies (admin/resources/requests/svc-request.ts). */
export interface LlmSchema {
  request: { model?: string; messages?: SchemaMessage[]; tools?: Array<{ name: string; description?: string }> } | null;
  response: { model?: string | null; messages?: SchemaMessage[]; error?: { svcMessage: unknown } } | null;
}

/** A message of {@link LlmSchema}: `_type` message | contentArray | functionCall | function | image | file. */
export interface SchemaMessage {
  _type: string;
  role?: string;
  content?: string;
  reasoning?: string;
  name?: string;
  tool_call_id?: string;
  image_url?: string;
  mime_type?: string;
  filename?: string;
  is_error?: boolean;
  contentArray?: SchemaMessage[];
  tool_calls?: Array<{ id?: string; name?: string; arguments?: unknown }>;
}

/** Managed-prompt inputs of a request (`GET /v1/request/:id/inputs`). */
export interface RequestInputs {
  inputs: Record<string, unknown>;
  prompt_id: string;
  version_id: string;
  environment: string | null;
}

/** Keyset position: the last row shown (`before` of the query body). */
export interface Cursor {
  created_at: string;
  request_id: string;
}

/** Body of `POST /v1/dashboard/query`. */
export interface DashboardQuery {
  filter: FilterNode;
  timeRange: { start: string; end: string };
  bucket?: string;
}

/** Aggregates of one dashboard slice. */
export interface DashboardTotals {
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  ttftP50Ms: number | null;
  ttftP95Ms: number | null;
}

/** One time bucket of the dashboard series. */
export interface DashboardPoint extends Omit<DashboardTotals, 'ttftP95Ms'> {
  time: string;
}

/** One group of a dashboard breakdown (`key` null for requests without a model, key or user). */
export interface BreakdownRow {
  key: string | null;
  label?: string | null;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
  latencyP50Ms: number | null;
}

/** Answer of `POST /v1/dashboard/query`. */
export interface DashboardData {
  totals: DashboardTotals;
  series: DashboardPoint[];
  breakdowns: { model: BreakdownRow[]; provider: BreakdownRow[]; apiKey: BreakdownRow[]; user: BreakdownRow[] };
}

/** A prompt-2025 prompt. */
export interface Prompt {
  id: string;
  name: string;
  tags: string[];
  created_at: string;
}

/** A prompt-2025 version (no body: see {@link Api.promptBody}). */
export interface PromptVersion {
  id: string;
  model: string;
  prompt_id: string;
  major_version: number;
  minor_version: number;
  commit_message: string;
  environments: string[];
  created_at: string;
}

/** A dataset as listed. */
export interface Dataset {
  id: string;
  name: string;
  created_at: string;
}

/** One row of a dataset. */
export interface DatasetRow {
  request_id: string;
  position: number;
  created_at: string;
  request_body: unknown;
  response_body: unknown;
}


/** A live API key (never the key itself). */
export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  created_at: string;
  last_used_at: string | null;
}

/** A key just created: `key` is shown this once. */
export interface CreatedKey extends Omit<ApiKey, 'last_used_at'> {
  key: string;
}

/** The message of a failed answer: the envelope's `error` when present, else the status line. */
async function failureMessage(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string' && body.error) return body.error;
  } catch {
    // Not JSON (a proxy's HTML page, an empty body): fall through to the status.
  }
  return `${res.status} ${res.statusText || 'request failed'}${text && text.length < 200 ? `: ${text}` : ''}`;
}

/**
 * Calls one route. `enveloped` routes answer `{data, error}` and yield `data`; bare routes yield the
 * body itself.
 * @throws {ApiError} on a network failure or any non-2xx answer.
 */
async function call<T>(key: string, method: string, path: string, body: unknown, enveloped: boolean): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: { authorization: 'Bearer ' + key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, `cannot reach admin: ${(err as Error).message}`);
  }
  if (!res.ok) throw new ApiError(res.status, await failureMessage(res));
  const json = (await res.json()) as unknown;
  if (!enveloped) return json as T;
  const env = json as { data: T; error: string | null };
  if (env.error) throw new ApiError(res.status, env.error);
  return env.data;
}

/** What `POST /v1/experiment/dataset/{id}/request` did: rows appended, ids skipped (present or repeated), rows now held. */
export interface AddedToDataset {
  added: number;
  skipped: number;
  rows: number;
}

/** A downloaded file: its bytes and the name the server gave it (Content-Disposition). */
export interface Download {
  blob: Blob;
  fileName: string;
}

/**
 * The file name of a Content-Disposition header: the UTF-8 `filename*` when present, else the
 * quoted `filename`, else `fallback`.
 */
function dispositionFileName(header: string | null, fallback: string): string {
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header ?? '');
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!);
    } catch {
      // A malformed escape: the plain filename below still names it.
    }
  }
  return /filename="([^"]*)"/i.exec(header ?? '')?.[1] || fallback;
}

/**
 * GETs a file route with the key (a plain link cannot send the Authorization header).
 * @throws {ApiError} on a network failure or any non-2xx answer (with the envelope's message).
 */
async function download(key: string, path: string, fallbackName: string): Promise<Download> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { authorization: 'Bearer ' + key } });
  } catch (err) {
    throw new ApiError(0, `cannot reach admin: ${(err as Error).message}`);
  }
  if (!res.ok) throw new ApiError(res.status, await failureMessage(res));
  const blob = await res.blob().catch((err: Error) => {
    throw new ApiError(0, `the download was cut: ${err.message}`);
  });
  return { blob, fileName: dispositionFileName(res.headers.get('content-disposition'), fallbackName) };
}

/** How many requests `POST /v1/experiment/dataset` takes without a `limit`: the newest 1,000. */
export const DATASET_DEFAULT_ROWS = 1_000;
/** The most it takes (admin/validation.ts MAX_LIMIT). */
export const DATASET_MAX_ROWS = 10_000;

/** The REST client bound to one API key; see {@link createApi}. */
export type Api = ReturnType<typeof createApi>;

/** Builds the REST client for `key`. Each method is one route. */
export function createApi(key: string) {
  const env = <T>(method: string, path: string, body?: unknown) => call<T>(key, method, path, body, true);
  const bare = <T>(method: string, path: string, body?: unknown) => call<T>(key, method, path, body, false);
  return {
    /**
     * The newest requests matching `filter`, `limit` of them, older than `before` when given. No
     * `sort`: the default order (created_at desc, id desc) is the one keyset paging follows.
     * Without bodies (`bodies: false`, admin's extension): `request_body`, `response_body` and
     * `llmSchema` are null, so no page is refused (413) for its bodies' size; the list shows none of
     * them, and {@link getRequest} reads one request whole.
     */
    queryRequests: (filter: FilterNode, limit: number, before?: Cursor) =>
      env<SvcRequest[]>('POST', '/v1/request/query', { filter, limit, bodies: false, ...(before ? { before } : {}) }),
    /** How many requests match `filter`. */
    countRequests: async (filter: FilterNode) => {
      const data = await env<number | { count: number }>('POST', '/v1/request/count', { filter });
      return typeof data === 'number' ? data : Number(data.count);
    },
    getRequest: (id: string) => env<SvcRequest>('GET', `/v1/request/${encodeURIComponent(id)}`),
    getRequestInputs: (id: string) => env<RequestInputs | null>('GET', `/v1/request/${encodeURIComponent(id)}/inputs`),
    dashboard: (query: DashboardQuery) => env<DashboardData>('POST', '/v1/dashboard/query', query),
    listPrompts: (search?: string) => bare<Prompt[]>('POST', '/v1/prompt-2025/query', { search: search ?? '', pageSize: 1000 }),
    listVersions: (promptId: string) => bare<PromptVersion[]>('POST', '/v1/prompt-2025/query/versions', { promptId }),
    promptBody: (versionId: string) => bare<unknown>('GET', `/v1/prompt-2025/${encodeURIComponent(versionId)}/prompt-body`),
    createPrompt: (name: string, promptBody: unknown) => bare<{ id: string; versionId: string }>('POST', '/v1/prompt-2025', { name, tags: [], promptBody }),
    /** A new version of `promptId` from base version `promptVersionId` (`environment` moves that label onto it). */
    updatePrompt: (body: { promptId: string; promptVersionId: string; newMajorVersion: boolean; environment?: string; commitMessage: string; promptBody: unknown }) =>
      bare<{ id: string }>('POST', '/v1/prompt-2025/update', body),
    /** Moves `environment`'s label onto an existing version. */
    promoteVersion: (promptId: string, promptVersionId: string, environment: string) =>
      bare<unknown>('POST', '/v1/prompt-2025/promote', { promptId, promptVersionId, environment }),
    listDatasets: () => env<Dataset[]>('POST', '/v1/experiment/dataset/query', {}),
    /** Dataset `id`'s rows in order, `limit` of them after `offset`. */
    datasetRows: (id: string, offset: number, limit: number) => env<DatasetRow[]>('POST', `/v1/experiment/dataset/${encodeURIComponent(id)}/query`, { offset, limit }),
    /** A dataset of the `limit` (at most {@link DATASET_MAX_ROWS}; default {@link DATASET_DEFAULT_ROWS}) newest requests matching `filter`. */
    createDataset: (datasetName: string, filter: FilterNode, limit?: number) =>
      env<{ datasetId: string; rows: number }>('POST', '/v1/experiment/dataset', { datasetName, filter, ...(limit ? { limit } : {}) }),
    /** Appends requests `requestIds` (at most 1,000) to dataset `id`, skipping those already in it. */
    addToDataset: (id: string, requestIds: string[]) => env<AddedToDataset>('POST', `/v1/experiment/dataset/${encodeURIComponent(id)}/request`, { requestIds }),
    /** Removes request `requestId` from dataset `id` (the request stays logged). */
    removeFromDataset: (id: string, requestId: string) =>
      env<null>('DELETE', `/v1/experiment/dataset/${encodeURIComponent(id)}/request/${encodeURIComponent(requestId)}`),
    /** Renames dataset `id` (1–200 characters). */
    renameDataset: (id: string, datasetName: string) => env<Dataset>('PATCH', `/v1/experiment/dataset/${encodeURIComponent(id)}`, { datasetName }),
    /** Deletes dataset `id` and its rows (the requests stay logged). */
    deleteDataset: (id: string) => env<null>('DELETE', `/v1/experiment/dataset/${encodeURIComponent(id)}`),
    /** Dataset `id`'s rows as JSON Lines (one object per row), as a file to save. */
    exportDataset: (id: string) => download(key, `/v1/experiment/dataset/${encodeURIComponent(id)}/export`, `dataset-${id}.jsonl`),
    /** Records (or replaces) the user's thumbs up (`rating` true) or down on request `id`. */
    giveFeedback: (id: string, rating: boolean) => env<null>('POST', `/v1/request/${encodeURIComponent(id)}/feedback`, { rating }),
    /**
     * Sessions with a request in [start, end) (epoch ms; both null: all time), newest last request
     * first, `limit` of them after `offset`.
     */
    querySessions: (range: { start: number; end: number } | null, limit: number, offset = 0) =>
      env<SessionSummary[]>('POST', '/v1/session/query', { ...(range ? { timeFilter: { startTimeUnixMs: range.start, endTimeUnixMs: range.end } } : {}), limit, offset }),
    /** Session `id`'s figures and its requests in time order, `limit` of them after `offset`. */
    getSession: (id: string, limit: number, offset = 0) =>
      env<SessionDetail>('GET', `/v1/session/${encodeURIComponent(id)}?limit=${limit}&offset=${offset}`),
    listKeys: () => env<ApiKey[]>('GET', '/v1/api-keys'),
    createKey: (name: string) => env<CreatedKey>('POST', '/v1/api-keys', { name }),
    revokeKey: (id: string) => env<null>('DELETE', `/v1/api-keys/${encodeURIComponent(id)}`),
  };
}
