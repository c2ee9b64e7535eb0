/**
 * Scores over REST: `POST /v1/evals/{requestId}` {score, name} stores a named score on a logged
 * request of the caller's organization (a second score with the same name replaces the first).
 * `GET /v1/request/{id}` shows them as `scores: {name: score}`. Data: null. Unknown request: 404.
 */
import type Router from '@koa/router';
import { number, type } from 'superstruct';
import type { Sql } from '../db.ts';
import { readSafeBody, sizedText } from '../filter.ts';
import { auth, HttpError, ok, uuidParam } from '../http.ts';

/** Body of `POST /v1/evals/{requestId}`: a finite number and a name of 1–256 characters. */
export const EvalBody = type({ score: number(), name: sizedText(256) });

/**
 * Stores (or replaces) score `name` of request `requestId` in the organization.
 * @returns false when the request does not exist in that organization.
 */
export async function upsertScore(sql: Sql, organizationId: string, requestId: string, name: string, score: number): Promise<boolean> {
  const rows = await sql`
    insert into request_score (request_id, organization_id, name, value)
    select r.id, r.organization_id, ${name}, ${score}::float8
    from request_log r where r.id = ${requestId} and r.organization_id = ${organizationId}
    on conflict (request_id, name) do update set value = excluded.value, created_at = now()
    returning request_id`;
  return rows.length > 0;
}

/** Registers the eval routes. `maxBodyBytes` bounds request bodies. */
export function evalRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/evals/:requestId', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const body = await readSafeBody(ctx, EvalBody, maxBodyBytes);
    const stored = await upsertScore(sql, auth(ctx).organizationId, id, body.name, body.score);
    if (!stored) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, null);
  });
}
