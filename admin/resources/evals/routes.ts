/**
 * Scores over REST: `POST /v1/evals/{requestId}` {score, name} stores a named score on a logged
 * request of the caller's organization (a second score with the same name replaces the first), and
 * `POST /v1/request/{requestId}/score` {scores: {name: number | boolean}} (the reference's AddScores)
 * several at once. `GET /v1/request/{id}` shows them as `scores: {name: score}`. Data: null.
 * Unknown request, or another organization's: 404.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { EvalBody, ScoresBody } from './schema.ts';
import { upsertScores } from './store.ts';

/** Registers the eval routes. `maxBodyBytes` bounds request bodies. */
export function evalRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/evals/:requestId', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const body = await readSafeBody(ctx, EvalBody, maxBodyBytes);
    const stored = await upsertScores(sql, auth(ctx).organizationId, id, { [body.name]: body.score });
    if (!stored) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, null);
  });

  router.post('/v1/request/:requestId/score', async (ctx) => {
    const id = uuidParam(ctx, 'requestId', 'request');
    const body = await readSafeBody(ctx, ScoresBody, maxBodyBytes);
    const stored = await upsertScores(sql, auth(ctx).organizationId, id, body.scores);
    if (!stored) throw new HttpError(404, `request ${id} not found`);
    ok(ctx, null);
  });
}
