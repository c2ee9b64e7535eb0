/**
 * Logged requests over REST: `GET /v1/request/{requestId}` (the SvcRequest envelope).
 * Every read is scoped to the caller's organization; another organization's id answers 404.
 */
import type Router from '@koa/router';
import type { Sql } from '../db.ts';
import { auth, HttpError, ok, uuidParam } from '../http.ts';
import { toSvcRequest, type RequestRow } from '../svc-request.ts';

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

/** Registers the request routes on `router`. */
export function requestRoutes(router: Router, sql: Sql): void {
  router.get('/v1/request/:requestId', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const row = await loadRequest(sql, auth(ctx).organizationId, id);
    if (!row) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, toSvcRequest(row));
  });
}
