/**
 * The SQL of the request log as the REST API reads it: one request with its scores and feedback, a
 * filtered and sorted page of them, and the prompt inputs of one; and a user's feedback on one
 * (`request_feedback`, migration 00007). Rows are written by admin/ingest.ts and deleted
 * by admin/retention.ts; every read here is scoped to one organization.
 */
import type { Fragment, Sql } from '../../db.ts';
import { compileFilter, parseIsoTimestamp, type FilterNode } from '../../filter.ts';
import { HttpError } from '../../http.ts';
import { DEFAULT_LIMIT, isUuid } from '../../validation.ts';
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
 * The organization's requests matching `query.filter` (with their scores and feedback), one page:
 * `offset`/`limit` (default {@link DEFAULT_LIMIT}) in the `sort` order (then newest first), or with `before` the
 * `limit` rows after that position in the default order (created_at desc, id desc), which the index
 * `(organization_id, created_at desc, id desc)` serves at any depth. See {@link selectionCondition}
 * for the flags.
 * @throws {HttpError} 400 for an invalid filter, or `before` with `offset` or `sort`.
 */
export async function queryRequests(sql: Sql, organizationId: string, query: RequestQuery): Promise<RequestRow[]> {
  let where = selectionCondition(sql, organizationId, query);
  if (query.before) {
    if (query.offset !== undefined || query.sort !== undefined) throw new HttpError(400, 'invalid body: before: cannot be combined with offset or sort');
    const at = parseIsoTimestamp(query.before.created_at);
    if (at === null || !isUuid(query.before.request_id)) throw new HttpError(400, 'invalid body: before: expected {created_at: ISO-8601 date-time, request_id: UUID}');
    where = sql`${where} and (r.created_at, r.id) < (${at}::text::timestamptz, ${query.before.request_id.toLowerCase()}::uuid)`;
  }
  return sql<RequestRow[]>`
    select r.*, ${feedbackColumns(sql)},
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s where s.request_id = r.id) as scores
    from request_log r left join request_feedback f on f.request_id = r.id
    where ${where}
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
