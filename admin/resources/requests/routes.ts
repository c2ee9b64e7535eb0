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
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { RequestQueryBody } from './schema.ts';
import { loadRequest, loadRequestInputs, queryRequests } from './store.ts';
import { toSvcRequest } from './svc-request.ts';

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
