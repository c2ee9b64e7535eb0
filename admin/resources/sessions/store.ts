/**
 * The SQL of sessions: an organization's requests grouped by `request_log.session_id` (written by
 * admin/ingest.ts from `Svc-Session-Id`, else Claude Code's or Codex's own session id), read
 * through the index `(organization_id, session_id, created_at)` of migration 00004. Every read is
 * scoped to one organization.
 */
import type { Fragment, Sql } from '../../db.ts';
import { compileFilter, type FilterNode } from '../../filter.ts';
import { DEFAULT_LIMIT } from '../../validation.ts';

/** One session's figures over all of its requests (tokens in tokens, cost in USD). */
export interface SessionRow {
  session_id: string;
  /** The newest `Svc-Session-Name` its requests were sent with; null when none sent one. */
  session_name: string | null;
  first_request_at: Date;
  last_request_at: Date;
  request_count: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** USD; requests without a known cost count 0. */
  cost_usd: number;
  /** Requests answered with a status >= 400 or none (0). */
  errors: number;
}

/** One request of a session, as its timeline shows it (latency in ms, cost in USD). */
export interface SessionRequestRow {
  id: string;
  created_at: Date;
  session_path: string | null;
  session_name: string | null;
  path: string;
  provider: string;
  request_model: string | null;
  user_id: string | null;
  status: number;
  delay_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
}

/** Options of {@link querySessions}: the selection (time range in epoch ms, filter) and the page. */
export interface SessionQuery {
  timeFilter?: { startTimeUnixMs: number; endTimeUnixMs: number };
  filter?: FilterNode;
  offset?: number;
  limit?: number;
}

/** The aggregate columns of {@link SessionRow} over the `request_log r` rows of a group. */
const aggregates = (sql: Sql): Fragment => sql`
  (array_agg(r.session_name order by r.created_at desc) filter (where r.session_name is not null))[1] as session_name,
  min(r.created_at) as first_request_at,
  max(r.created_at) as last_request_at,
  count(*)::float8 as request_count,
  coalesce(sum(r.prompt_tokens), 0)::float8 as prompt_tokens,
  coalesce(sum(r.completion_tokens), 0)::float8 as completion_tokens,
  coalesce(sum(r.total_tokens), 0)::float8 as total_tokens,
  coalesce(sum(r.cost_usd), 0)::float8 as cost_usd,
  (count(*) filter (where r.status >= 400 or r.status = 0))::float8 as errors`;

/**
 * The organization's sessions with at least one request in `query.timeFilter` (all time without)
 * matching `query.filter`, each with its figures over all of its requests (in or out of the range),
 * newest last request first (then session id, descending), `offset`/`limit` (default
 * {@link DEFAULT_LIMIT}).
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function querySessions(sql: Sql, organizationId: string, query: SessionQuery): Promise<SessionRow[]> {
  const time = query.timeFilter
    ? sql`and r.created_at >= to_timestamp(${query.timeFilter.startTimeUnixMs}::float8 / 1000) and r.created_at < to_timestamp(${query.timeFilter.endTimeUnixMs}::float8 / 1000)`
    : sql``;
  return sql<SessionRow[]>`
    with active as (
      select distinct r.session_id from request_log r
      where ${compileFilter(sql, organizationId, query.filter ?? 'all')} and r.session_id is not null ${time}
    )
    select r.session_id, ${aggregates(sql)}
    from request_log r join active a on a.session_id = r.session_id
    where r.organization_id = ${organizationId}
    group by r.session_id
    order by last_request_at desc, r.session_id desc
    limit ${query.limit ?? DEFAULT_LIMIT} offset ${query.offset ?? 0}`;
}

/**
 * One session of the organization: its figures and one page of its requests in time order
 * (created_at, then id), with each request's session path.
 * @returns null when the organization has no request in that session.
 */
export async function loadSession(sql: Sql, organizationId: string, sessionId: string, page: { offset: number; limit: number }): Promise<{ session: SessionRow; requests: SessionRequestRow[] } | null> {
  const [session] = await sql<SessionRow[]>`
    select r.session_id, ${aggregates(sql)}
    from request_log r
    where r.organization_id = ${organizationId} and r.session_id = ${sessionId}::text
    group by r.session_id`;
  if (!session) return null;
  const requests = await sql<SessionRequestRow[]>`
    select r.id, r.created_at, r.session_path, r.session_name, r.path, r.provider, r.request_model, r.user_id, r.status,
      r.delay_ms, r.prompt_tokens, r.completion_tokens, r.total_tokens, r.cost_usd
    from request_log r
    where r.organization_id = ${organizationId} and r.session_id = ${sessionId}::text
    order by r.created_at, r.id
    limit ${page.limit} offset ${page.offset}`;
  return { session, requests };
}
