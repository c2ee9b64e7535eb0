/**
 * Logged requests over REST:
 * - `GET /v1/request/{requestId}` → the SvcRequest envelope (another organization's id answers 404);
 * - `GET /v1/request/{requestId}/inputs` → `{inputs, prompt_id, version_id, environment}` when the
 *   request came through gateway prompt management, else `{"data": null, "error": null}` (unknown ids too);
 * - `POST /v1/request/query` {filter, offset?, limit?, sort?, isScored?, isPartOfExperiment?, isCached?,
 *   includeInputs?} → the matching requests as SvcRequest, newest first unless `sort` says otherwise.
 * Every read is scoped to the caller's organization.
 */
import type Router from '@koa/router';
import { boolean, enums, integer, literal, max, min, object, optional } from 'superstruct';
import type { Sql } from '../db.ts';
import { compileFilter, FilterStruct, readSafeBody, type FilterNode, type Fragment } from '../filter.ts';
import { auth, HttpError, isUuid, ok, uuidParam } from '../http.ts';
import { toSvcRequest, type RequestRow } from '../svc-request.ts';

/** Default `limit` of `POST /v1/request/query`, of the dataset sampler and of dataset rows. */
export const DEFAULT_LIMIT = 100;
/** Largest `limit` accepted by the filter-tree endpoints. */
export const MAX_LIMIT = 10_000;
/** Largest `offset` accepted by the filter-tree endpoints. */
export const MAX_OFFSET = 1_000_000_000;

/** `offset`: an integer in [0, {@link MAX_OFFSET}]. */
export const OffsetStruct = max(min(integer(), 0), MAX_OFFSET);
/** `limit`: an integer in [1, {@link MAX_LIMIT}]. */
export const LimitStruct = max(min(integer(), 1), MAX_LIMIT);

const SortDirection = enums(['asc', 'desc']);

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

const SortStruct = object({
  random: optional(literal(true)),
  created_at: optional(SortDirection),
  latency: optional(SortDirection),
  total_tokens: optional(SortDirection),
  completion_tokens: optional(SortDirection),
  prompt_tokens: optional(SortDirection),
  user_id: optional(SortDirection),
  body_model: optional(SortDirection),
  request_prompt: optional(SortDirection),
  cost: optional(SortDirection),
  time_to_first_token: optional(SortDirection),
});

/** Body of `POST /v1/request/query` (no other members). */
export const RequestQueryBody = object({
  filter: FilterStruct,
  offset: optional(OffsetStruct),
  limit: optional(LimitStruct),
  sort: optional(SortStruct),
  isScored: optional(boolean()),
  isPartOfExperiment: optional(boolean()),
  isCached: optional(boolean()),
  includeInputs: optional(boolean()),
});

/** Query options of {@link queryRequests}. */
export interface RequestQuery {
  filter: FilterNode;
  offset?: number;
  limit?: number;
  sort?: Partial<Record<keyof typeof SORT_COLUMNS, 'asc' | 'desc'>> & { random?: true };
  isScored?: boolean;
  isPartOfExperiment?: boolean;
  isCached?: boolean;
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
 * The organization's requests matching `query.filter` (with their scores), one page.
 * `isScored` keeps requests with (true) / without (false) a score; `isPartOfExperiment` those in
 * (true) / not in (false) a dataset; `isCached: true` matches nothing (the gateway serves no cached answers).
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function queryRequests(sql: Sql, organizationId: string, query: RequestQuery): Promise<RequestRow[]> {
  const conditions: Fragment[] = [compileFilter(sql, organizationId, query.filter)];
  if (query.isScored !== undefined) {
    conditions.push(query.isScored ? sql`exists (select 1 from request_score s where s.request_id = r.id)` : sql`not exists (select 1 from request_score s where s.request_id = r.id)`);
  }
  if (query.isPartOfExperiment !== undefined) {
    conditions.push(
      query.isPartOfExperiment ? sql`exists (select 1 from dataset_row d where d.request_id = r.id)` : sql`not exists (select 1 from dataset_row d where d.request_id = r.id)`,
    );
  }
  if (query.isCached === true) conditions.push(sql`false`);
  const where = conditions.reduce((a, b) => sql`${a} and ${b}`);
  return sql<RequestRow[]>`
    select r.*,
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s where s.request_id = r.id) as scores
    from request_log r
    where ${where}
    order by ${orderBy(sql, query.sort)}
    limit ${query.limit ?? DEFAULT_LIMIT} offset ${query.offset ?? 0}`;
}

/**
 * Loads one request of an organization with its scores.
 * @returns the row, or null when it does not exist in that organization.
 */
export async function loadRequest(sql: Sql, organizationId: string, requestId: string): Promise<RequestRow | null> {
  const [row] = await sql<RequestRow[]>`
    select r.*,
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s where s.request_id = r.id) as scores
    from request_log r
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

/** Registers the request routes on `router`. `maxBodyBytes` bounds request bodies. */
export function requestRoutes(router: Router, sql: Sql, maxBodyBytes = 1024 * 1024): void {
  router.post('/v1/request/query', async (ctx) => {
    const body = await readSafeBody(ctx, RequestQueryBody, maxBodyBytes);
    const rows = await queryRequests(sql, auth(ctx).organizationId, body);
    ok(ctx, rows.map(toSvcRequest));
  });

  router.get('/v1/request/:requestId/inputs', async (ctx) => {
    const id = String((ctx.params as Record<string, string>).requestId ?? '');
    ok(ctx, await loadRequestInputs(sql, auth(ctx).organizationId, id.toLowerCase()));
  });

  router.get('/v1/request/:requestId', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const row = await loadRequest(sql, auth(ctx).organizationId, id);
    if (!row) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, toSvcRequest(row));
  });
}
