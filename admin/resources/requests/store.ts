/**
 * The SQL of the request log as the REST API reads it: one request with its scores and feedback, a
 * filtered and sorted page of them (its bodies within a byte budget, page-budget.ts), and the prompt
 * inputs of one; and a user's feedback on one (`request_feedback`, migration 00007). Rows are written by admin/ingest.ts and deleted
 * by admin/retention.ts; every read here is scoped to one organization.
 */
import type { Fragment, Sql } from '../../db.ts';
import { compileFilter, parseIsoTimestamp, type FilterNode } from '../../filter.ts';
import { HttpError } from '../../http.ts';
import { DEFAULT_LIMIT, isUuid } from '../../validation.ts';
import { DEFAULT_MAX_PAGE_BODY_BYTES, inIdOrder, pageIdsWithinBudget } from './page-budget.ts';
import type { RequestRow } from './svc-request.ts';

/** Sort keys of `POST /v1/request/query` → column of `request_log r` (fixed, never from input). */
const SORT_COLUMNS = {
  created_at: (sql: Sql) => sql`r.created_at`,
  latency: (sql: Sql) => sql`r.delay_ms`,
  total_tokens: (sql: Sql) => sql`r.total_tokens`,
  completion_tokens: (sql: Sql) => sql`r.completion_tokens`,
  prompt_tokens: (sql: Sql) => sql`r.prompt_tokens`,
  user_id: (sql: Sql) => sql`r.user_id`,
  body_model: (sql: Sql) => sql`r.request_model`,
  request_prompt: (sql: Sql) => sql`r.prompt_text`,
  cost: (sql: Sql) => sql`r.cost_usd`,
  time_to_first_token: (sql: Sql) => sql`r.time_to_first_token`,
} as const;

/** Which rows: the filter and the flags {@link queryRequests} and {@link countRequests} share. */
export interface RequestSelection {
  filter: FilterNode;
  isScored?: boolean;
  isPartOfExperiment?: boolean;
  isCached?: boolean;
}

/** A keyset position: the last row of the previous page (`created_at` ISO-8601, `request_id` a UUID). */
export interface RequestCursor {
  created_at: string;
  request_id: string;
}

/** Query options of {@link queryRequests}. */
export interface RequestQuery extends RequestSelection {
  offset?: number;
  limit?: number;
  sort?: Partial<Record<keyof typeof SORT_COLUMNS, 'asc' | 'desc'>> & { random?: true };
  /** Only rows after this one in the default order (created_at desc, id desc); not with offset or sort. */
  before?: RequestCursor;
  /** false: the rows without their bodies (request_body, response_body, error null), no body budget. */
  bodies?: boolean;
}

function orderBy(sql: Sql, sort: RequestQuery['sort']): Fragment {
  if (sort?.random) return sql`random()`;
  const parts: Fragment[] = [];
  for (const [key, dir] of Object.entries(sort ?? {})) {
    const col = SORT_COLUMNS[key as keyof typeof SORT_COLUMNS];
    if (!col || dir === undefined) continue;
    parts.push(dir === 'asc' ? sql`${col(sql)} asc` : sql`${col(sql)} desc`);
  }
  parts.push(sql`r.created_at desc`, sql`r.id desc`);
  return parts.reduce((a, b) => sql`${a}, ${b}`);
}

/**
 * The condition selecting the organization's requests per `query` on `request_log r`: the filter,
 * `isScored` (true: with a score, false: without), `isPartOfExperiment` (true: in a dataset, false:
 * in none), `isCached` (true: response-cache hits, answered from the cache; false: every other request).
 * @throws {HttpError} 400 for an invalid filter.
 */
function selectionCondition(sql: Sql, organizationId: string, query: RequestSelection): Fragment {
  const conditions: Fragment[] = [compileFilter(sql, organizationId, query.filter)];
  if (query.isScored !== undefined) {
    conditions.push(query.isScored ? sql`exists (select 1 from request_score s where s.request_id = r.id)` : sql`not exists (select 1 from request_score s where s.request_id = r.id)`);
  }
  if (query.isPartOfExperiment !== undefined) {
    conditions.push(
      query.isPartOfExperiment ? sql`exists (select 1 from dataset_row d where d.request_id = r.id)` : sql`not exists (select 1 from dataset_row d where d.request_id = r.id)`,
    );
  }
  if (query.isCached !== undefined) conditions.push(query.isCached ? sql`r.cache_reference_id is not null` : sql`r.cache_reference_id is null`);
  return conditions.reduce((a, b) => sql`${a} and ${b}`);
}

/** The feedback columns of a request row, from `request_feedback f` left-joined on the request. */
const feedbackColumns = (sql: Sql): Fragment => sql`f.id as feedback_id, f.rating as feedback_rating, f.created_at as feedback_created_at`;

/**
 * The `request_log r` columns a listed request shows (every column {@link RequestRow} names): not
 * `prompt_text` or `prompt_inputs`, which the list does not show and {@link pageIdsWithinBudget} does not measure.
 * Without `bodies` (`bodies: false`), the bodies and the error are nulls, never read.
 */
const listedColumns = (sql: Sql, bodies = true): Fragment => sql`
  r.id, r.created_at, r.response_created_at, r.path, r.target_url, r.provider, r.request_model, r.response_model,
  r.model_override, r.user_id, r.properties, r.status, r.delay_ms, r.time_to_first_token, r.prompt_tokens,
  r.completion_tokens, r.total_tokens, r.reasoning_tokens, r.prompt_cache_read_tokens, r.prompt_cache_write_tokens,
  r.prompt_audio_tokens, r.completion_audio_tokens, r.cost_usd, r.cost_note, r.cache_enabled, r.cache_reference_id,
  r.cost_saved_usd, r.session_id, r.session_path, r.session_name, r.prompt_id, r.prompt_version,
  ${bodies ? sql`r.request_body, r.response_body, r.error` : sql`null::json as request_body, null::json as response_body, null::json as error`},
  r.tokens_source, r.extra, r.updated_at`;

/**
 * Bytes of the bodies a listed request carries (request, response, error) as their JSON text, of
 * the columns of `p`. octet_length is the raw length, not the compressed one (migration 00010's lz4).
 */
const bodyBytes = (sql: Sql): Fragment =>
  sql`(coalesce(octet_length(p.request_body::text), 0) + coalesce(octet_length(p.response_body::text), 0) + coalesce(octet_length(p.error::text), 0))::float8`;

/**
 * The condition of {@link queryRequests}: the selection, and with `before` the rows after it.
 * @throws {HttpError} 400 for an invalid filter, or `before` with `offset` or `sort`.
 */
function pageCondition(sql: Sql, organizationId: string, query: RequestQuery): Fragment {
  const where = selectionCondition(sql, organizationId, query);
  if (!query.before) return where;
  if (query.offset !== undefined || query.sort !== undefined) throw new HttpError(400, 'invalid body: before: cannot be combined with offset or sort');
  const at = parseIsoTimestamp(query.before.created_at);
  if (at === null || !isUuid(query.before.request_id)) throw new HttpError(400, 'invalid body: before: expected {created_at: ISO-8601 date-time, request_id: UUID}');
  return sql`${where} and (r.created_at, r.id) < (${at}::text::timestamptz, ${query.before.request_id.toLowerCase()}::uuid)`;
}

/**
 * The organization's requests matching `query.filter` (with their scores and feedback), one page:
 * `offset`/`limit` (default {@link DEFAULT_LIMIT}) in the `sort` order (then newest first), or with `before` the
 * `limit` rows after that position in the default order (created_at desc, id desc), which the index
 * `(organization_id, created_at desc, id desc)` serves at any depth. See {@link selectionCondition}
 * for the flags. The page's ids and body sizes are read first; its bodies are loaded only when they
 * hold at most `maxPageBodyBytes` (see page-budget.ts), so one call never holds more; with
 * `bodies: false` they are not read at all ({@link queryRequestsWithoutBodies}).
 * @throws {HttpError} 400 for an invalid filter, or `before` with `offset` or `sort`; 413 naming
 *   `limit` when the page's bodies exceed `maxPageBodyBytes`.
 */
export async function queryRequests(sql: Sql, organizationId: string, query: RequestQuery, maxPageBodyBytes = DEFAULT_MAX_PAGE_BODY_BYTES): Promise<RequestRow[]> {
  if (query.bodies === false) return queryRequestsWithoutBodies(sql, organizationId, query);
  // The bodies ride through the sort as TOAST pointers; only the outer select, row by row, measures them.
  const page = sql`
    select r.id, r.request_body, r.response_body, r.error from request_log r
    where ${pageCondition(sql, organizationId, query)}
    order by ${orderBy(sql, query.sort)}
    limit ${query.limit ?? DEFAULT_LIMIT} offset ${query.offset ?? 0}`;
  const sizes = sql`select p.id, ${bodyBytes(sql)} as body_bytes from (${page}) p`;
  const ids = await pageIdsWithinBudget(sizes, maxPageBodyBytes, { one: 'request', many: 'requests' });
  if (ids.length === 0) return [];
  const rows = await sql<RequestRow[]>`
    select ${listedColumns(sql)}, ${feedbackColumns(sql)},
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s where s.request_id = r.id) as scores
    from request_log r left join request_feedback f on f.request_id = r.id
    where r.organization_id = ${organizationId} and r.id = any(${ids}::uuid[])`;
  return inIdOrder(ids, rows, (r) => r.id);
}

/**
 * {@link queryRequests} with `bodies: false`: the same page, its bodies and error null (neither
 * read nor measured, so no body budget applies: a row's other columns are a few hundred bytes).
 * @throws {HttpError} 400 for an invalid filter, or `before` with `offset` or `sort`.
 */
async function queryRequestsWithoutBodies(sql: Sql, organizationId: string, query: RequestQuery): Promise<RequestRow[]> {
  return sql<RequestRow[]>`
    select ${listedColumns(sql, false)}, ${feedbackColumns(sql)},
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s where s.request_id = r.id) as scores
    from request_log r left join request_feedback f on f.request_id = r.id
    where ${pageCondition(sql, organizationId, query)}
    order by ${orderBy(sql, query.sort)}
    limit ${query.limit ?? DEFAULT_LIMIT} offset ${query.offset ?? 0}`;
}

/**
 * How many of the organization's requests match `query` (the filter and flags of {@link queryRequests}).
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function countRequests(sql: Sql, organizationId: string, query: RequestSelection): Promise<number> {
  const [row] = await sql<{ count: number }[]>`select count(*)::float8 as count from request_log r where ${selectionCondition(sql, organizationId, query)}`;
  return row!.count;
}

/**
 * Loads one request of an organization with its scores and feedback.
 * @returns the row, or null when it does not exist in that organization.
 */
export async function loadRequest(sql: Sql, organizationId: string, requestId: string): Promise<RequestRow | null> {
  const [row] = await sql<RequestRow[]>`
    select r.*, ${feedbackColumns(sql)},
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s where s.request_id = r.id) as scores
    from request_log r left join request_feedback f on f.request_id = r.id
    where r.id = ${requestId} and r.organization_id = ${organizationId}`;
  return row ?? null;
}

/** The prompt inputs of a request made through gateway prompt management. */
export interface RequestInputs {
  inputs: Record<string, unknown>;
  prompt_id: string;
  version_id: string;
  environment: string | null;
}

/**
 * The prompt inputs of a request.
 * @returns null when the request is unknown in the organization or did not use a gateway prompt.
 */
export async function loadRequestInputs(sql: Sql, organizationId: string, requestId: string): Promise<RequestInputs | null> {
  if (!isUuid(requestId)) return null;
  const [row] = await sql<{ prompt_inputs: Record<string, unknown> | null; prompt_id: string | null; prompt_version_id: string | null; prompt_environment: string | null }[]>`
    select prompt_inputs, prompt_id, prompt_version_id, prompt_environment
    from request_log where id = ${requestId} and organization_id = ${organizationId}`;
  if (!row || !row.prompt_id || !row.prompt_version_id) return null;
  return { inputs: row.prompt_inputs ?? {}, prompt_id: row.prompt_id, version_id: row.prompt_version_id, environment: row.prompt_environment };
}

/** A request's feedback as stored: its id, the rating (true: thumbs up) and when it was given. */
export interface FeedbackRow {
  id: string;
  rating: boolean;
  created_at: Date;
}

/**
 * Records a user's rating of one of the organization's requests (true: thumbs up, false: down).
 * A request has at most one feedback: a second call replaces its rating and time (the id stays).
 * One statement: the insert reads the request in the organization, so another organization's
 * request is as unknown as a missing one.
 * @returns the stored feedback, or null when the request is unknown in the organization.
 */
export async function recordFeedback(sql: Sql, organizationId: string, requestId: string, rating: boolean): Promise<FeedbackRow | null> {
  const [row] = await sql<FeedbackRow[]>`
    insert into request_feedback (request_id, organization_id, rating)
    select r.id, r.organization_id, ${rating}::boolean from request_log r
    where r.id = ${requestId}::uuid and r.organization_id = ${organizationId}
    on conflict (request_id) do update set rating = excluded.rating, created_at = now()
    returning id, rating, created_at`;
  return row ?? null;
}
