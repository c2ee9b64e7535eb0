/**
 * Logged requests over REST:
 * - `GET /v1/request/{requestId}` → the SvcRequest envelope (another organization's id answers 404);
 * - `GET /v1/request/{requestId}/inputs` → `{inputs, prompt_id, version_id, environment}` when the
 *   request came through gateway prompt management, else `{"data": null, "error": null}` (unknown ids too);
 * - `POST /v1/request/query` {filter, offset?, limit?, sort?, before?, isScored?, isPartOfExperiment?,
 *   isCached?, includeInputs?} → the matching requests as SvcRequest, newest first unless `sort` says
 *   otherwise; `before: {created_at, request_id}` (the last row of the previous page) pages by keyset
 *   in the default order (created_at desc, id desc) and cannot be combined with `offset` or `sort`;
 *   a page whose bodies hold more than `admin.max-page-body-bytes` is a 413 naming `limit` (page-budget.ts);
 *   `bodies: false` (an extension) answers the same rows with `request_body`, `response_body`,
 *   `llmSchema` and `response_id` null, never a 413 for their size (the console's list);
 * - `POST /v1/request/count` {filter, isScored?, isPartOfExperiment?, isCached?, includeInputs?} →
 *   how many requests match (a number);
 * - `POST /v1/request/{requestId}/feedback` {rating: boolean} → `{"data": null, "error": null}`: the
 *   user's thumbs up (true) or down (false), shown as the record's `feedback_id`, `feedback_rating`
 *   and `feedback_created_at`; repeating it replaces the rating. Unknown id or another
 *   organization's: 404; a rating that is not a boolean: 400 naming `rating`.
 * Every read is scoped to the caller's organization.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { DEFAULT_MAX_PAGE_BODY_BYTES } from './page-budget.ts';
import { FeedbackBody, RequestCountBody, RequestQueryBody } from './schema.ts';
import { countRequests, loadRequest, loadRequestInputs, queryRequests, recordFeedback } from './store.ts';
import { toSvcRequest } from './svc-request.ts';

/**
 * Registers the request routes on `router`. `maxBodyBytes` bounds request bodies; `maxPageBodyBytes`
 * the body text one page of `POST /v1/request/query` may carry.
 */
export function requestRoutes(router: Router, sql: Sql, maxBodyBytes = 1024 * 1024, maxPageBodyBytes = DEFAULT_MAX_PAGE_BODY_BYTES): void {
  router.post('/v1/request/query', async (ctx) => {
    const body = await readSafeBody(ctx, RequestQueryBody, maxBodyBytes);
    const rows = await queryRequests(sql, auth(ctx).organizationId, body, maxPageBodyBytes);
    ok(ctx, rows.map(toSvcRequest));
  });

  router.post('/v1/request/count', async (ctx) => {
    const body = await readSafeBody(ctx, RequestCountBody, maxBodyBytes);
    ok(ctx, await countRequests(sql, auth(ctx).organizationId, body));
  });

  router.get('/v1/request/:requestId/inputs', async (ctx) => {
    const id = String((ctx.params as Record<string, string>).requestId ?? '');
    ok(ctx, await loadRequestInputs(sql, auth(ctx).organizationId, id.toLowerCase()));
  });

  router.post('/v1/request/:requestId/feedback', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const body = await readSafeBody(ctx, FeedbackBody, maxBodyBytes);
    const stored = await recordFeedback(sql, auth(ctx).organizationId, id, body.rating);
    if (!stored) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, null);
  });

  router.get('/v1/request/:requestId', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const row = await loadRequest(sql, auth(ctx).organizationId, id);
    if (!row) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, toSvcRequest(row));
  });
}
