/**
 * The dashboard over REST: `POST /v1/dashboard/query` {filter?: <filter node, default "all">,
 * timeRange: {start, end} (ISO-8601, start inclusive, end exclusive, end after start, at most 366
 * days), bucket?: "minute" | "hour" | "day" (default: the narrowest giving at most 200 buckets)} →
 * `{totals, series, breakdowns}` of the organization's requests in the range (see store.ts's
 * {@link Dashboard}: counts, tokens, cost USD, latency and time-to-first-token percentiles in ms).
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, ok } from '../../http.ts';
import { readSafeBody } from '../../validation.ts';
import { DashboardQueryBody, defaultBucket, epochMs } from './schema.ts';
import { dashboard } from './store.ts';

/** Registers the dashboard route. `maxBodyBytes` bounds request bodies. */
export function dashboardRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/dashboard/query', async (ctx) => {
    const body = await readSafeBody(ctx, DashboardQueryBody, maxBodyBytes);
    const startMs = epochMs(body.timeRange.start);
    const endMs = epochMs(body.timeRange.end);
    const bucket = body.bucket ?? defaultBucket(startMs, endMs);
    ok(ctx, await dashboard(sql, auth(ctx).organizationId, { filter: body.filter ?? 'all', startMs, endMs, bucket }));
  });
}
