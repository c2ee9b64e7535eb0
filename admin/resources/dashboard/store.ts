/**
 * The SQL of the dashboard: totals, a time series and breakdowns of the organization's requests in
 * a time range, in two statements run at once (each GROUPING SETS over one scan of the range;
 * percentiles with `percentile_cont`): totals and series, and the four breakdowns.
 */
import type { Fragment, Sql } from '../../db.ts';
import { compileFilter, type FilterNode } from '../../filter.ts';
import { BUCKET_MS, bucketStart, type Bucket } from './schema.ts';

/** The counts every aggregate has (tokens; cost in USD). */
export interface DashboardCounts {
  requests: number;
  /** Requests answered with a status >= 400, or with none (0: no answer). */
  errors: number;
  promptTokens: number;
  completionTokens: number;
  costUsd: number;
}

/**
 * Aggregates of every request in the range (latency and time to first token in ms): medians and
 * 95th percentiles (continuous) over the requests that have the value; null when none has.
 */
export interface DashboardTotals extends DashboardCounts {
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
  ttftP50Ms: number | null;
  ttftP95Ms: number | null;
}

/** One bucket of the series: its start (ISO-8601, UTC-aligned) and its aggregates (zeros and nulls when empty). */
export interface DashboardPoint extends Omit<DashboardTotals, 'ttftP95Ms'> {
  time: string;
}

/**
 * One group of a breakdown: `key` the model / provider / API key id / user id (null for requests
 * without one); `label` the API key's name (apiKey only).
 */
export interface BreakdownRow extends DashboardCounts {
  key: string | null;
  label?: string | null;
  latencyP50Ms: number | null;
}

/** The dashboard's answer. */
export interface Dashboard {
  totals: DashboardTotals;
  series: DashboardPoint[];
  breakdowns: { model: BreakdownRow[]; provider: BreakdownRow[]; apiKey: BreakdownRow[]; user: BreakdownRow[] };
}

/** Groups each breakdown keeps (the most requests first, then by key). */
export const BREAKDOWN_TOP = 20;

type Kind = 'totals' | 'series' | 'model' | 'provider' | 'apiKey' | 'user';

interface AggregateRow {
  kind: Kind;
  bucket: Date | null;
  key: string | null;
  label: string | null;
  requests: number;
  errors: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
  latency_p50: number | null;
  latency_p95: number | null;
  ttft_p50: number | null;
  ttft_p95: number | null;
}

/** The counts of an aggregate row (zeros for a bucket without requests, `r` undefined). */
function countsOf(r: AggregateRow | undefined): DashboardCounts {
  return { requests: r?.requests ?? 0, errors: r?.errors ?? 0, promptTokens: r?.prompt_tokens ?? 0, completionTokens: r?.completion_tokens ?? 0, costUsd: r?.cost_usd ?? 0 };
}

/** The aggregates every grouping answers, over the rows `b` (counts as float8: JSON numbers, not bigint strings). */
function measures(sql: Sql): Fragment {
  return sql`
    count(*)::float8 as requests,
    count(*) filter (where b.status is null or b.status = 0 or b.status >= 400)::float8 as errors,
    coalesce(sum(b.prompt_tokens), 0)::float8 as prompt_tokens,
    coalesce(sum(b.completion_tokens), 0)::float8 as completion_tokens,
    coalesce(sum(b.cost_usd), 0)::float8 as cost_usd,
    percentile_cont(0.5) within group (order by b.delay_ms) as latency_p50`;
}

/**
 * Runs one aggregate statement in its own transaction, with room to sort in memory (not on disk)
 * and without JIT compilation, which costs more than it saves on statements of this size.
 */
async function aggregate(sql: Sql, statement: Fragment): Promise<AggregateRow[]> {
  return (await sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    await tx`set local work_mem = '64MB'`;
    await tx`set local jit = off`;
    return tx<AggregateRow[]>`${statement}`;
  })) as AggregateRow[];
}

/**
 * Aggregates the organization's requests matching `filter` with `start <= created_at < end` (epoch
 * ms): totals, one point per `bucket` (UTC-aligned; every bucket from the one holding `start` to the
 * one holding the last instant before `end`), and the top {@link BREAKDOWN_TOP} models (the
 * requested model, as `request.model` filters it), providers, API keys and users by requests.
 * @throws {HttpError} 400 for an invalid filter.
 */
export async function dashboard(sql: Sql, organizationId: string, query: { filter: FilterNode; startMs: number; endMs: number; bucket: Bucket }): Promise<Dashboard> {
  const where = compileFilter(sql, organizationId, query.filter);
  const start = new Date(query.startMs).toISOString();
  const end = new Date(query.endMs).toISOString();
  const inRange = sql`${where} and r.created_at >= ${start}::timestamptz and r.created_at < ${end}::timestamptz`;
  // Two statements on two connections at once: totals and series (four percentiles each), and the
  // breakdowns (one percentile each), so no grouping computes percentiles it does not answer.
  const [overall, groups] = await Promise.all([
    aggregate(
      sql,
      sql`
      select case when grouping(b.bucket) = 0 then 'series' else 'totals' end as kind, b.bucket, null::text as key, null::text as label,
        ${measures(sql)},
        percentile_cont(0.95) within group (order by b.delay_ms) as latency_p95,
        percentile_cont(0.5) within group (order by b.time_to_first_token) as ttft_p50,
        percentile_cont(0.95) within group (order by b.time_to_first_token) as ttft_p95
      from (
        select r.status, r.prompt_tokens, r.completion_tokens, r.cost_usd, r.delay_ms, r.time_to_first_token,
          date_trunc(${query.bucket}::text, r.created_at at time zone 'UTC') at time zone 'UTC' as bucket
        from request_log r where ${inRange}
      ) b
      group by grouping sets ((), (b.bucket))`,
    ),
    aggregate(
      sql,
      sql`
      with grouped as (
        select
          case
            when grouping(b.request_model) = 0 then 'model'
            when grouping(b.provider) = 0 then 'provider'
            when grouping(b.api_key_id) = 0 then 'apiKey'
            else 'user'
          end as kind,
          coalesce(b.request_model, b.provider, b.api_key_id::text, b.user_id) as key,
          b.api_key_id,
          ${measures(sql)}
        from (
          select r.status, r.prompt_tokens, r.completion_tokens, r.cost_usd, r.delay_ms, r.request_model, r.provider, r.api_key_id, r.user_id
          from request_log r where ${inRange}
        ) b
        group by grouping sets ((b.request_model), (b.provider), (b.api_key_id), (b.user_id))
      ), ranked as (
        select g.*, row_number() over (partition by g.kind order by g.requests desc, g.key asc nulls last) as rank
        from grouped g
      )
      select ranked.kind, null::timestamptz as bucket, ranked.key,
        (select k.name from api_key k where k.id = ranked.api_key_id and k.organization_id = ${organizationId}) as label,
        ranked.requests, ranked.errors, ranked.prompt_tokens, ranked.completion_tokens, ranked.cost_usd, ranked.latency_p50,
        null::float8 as latency_p95, null::float8 as ttft_p50, null::float8 as ttft_p95
      from ranked
      where ranked.rank <= ${BREAKDOWN_TOP}
      order by ranked.kind, ranked.rank`,
    ),
  ]);
  const rows = [...overall, ...groups];

  const totalsRow = rows.find((r) => r.kind === 'totals');
  const totals: DashboardTotals = {
    ...countsOf(totalsRow),
    latencyP50Ms: totalsRow?.latency_p50 ?? null,
    latencyP95Ms: totalsRow?.latency_p95 ?? null,
    ttftP50Ms: totalsRow?.ttft_p50 ?? null,
    ttftP95Ms: totalsRow?.ttft_p95 ?? null,
  };

  const byBucket = new Map<number, AggregateRow>();
  for (const r of rows) if (r.kind === 'series' && r.bucket) byBucket.set(r.bucket.getTime(), r);
  const series: DashboardPoint[] = [];
  const size = BUCKET_MS[query.bucket];
  for (let t = bucketStart(query.startMs, query.bucket); t < query.endMs; t += size) {
    const r = byBucket.get(t);
    series.push({
      time: new Date(t).toISOString(),
      ...countsOf(r),
      latencyP50Ms: r?.latency_p50 ?? null,
      latencyP95Ms: r?.latency_p95 ?? null,
      ttftP50Ms: r?.ttft_p50 ?? null,
    });
  }

  const breakdown = (kind: Kind): BreakdownRow[] =>
    rows
      .filter((r) => r.kind === kind)
      .map((r) => ({
        key: r.key,
        ...(kind === 'apiKey' ? { label: r.label } : {}),
        ...countsOf(r),
        latencyP50Ms: r.latency_p50,
      }));
  return { totals, series, breakdowns: { model: breakdown('model'), provider: breakdown('provider'), apiKey: breakdown('apiKey'), user: breakdown('user') } };
}
