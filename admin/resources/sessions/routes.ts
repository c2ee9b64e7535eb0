/**
 * Sessions over REST: an organization's requests grouped by their session (`Svc-Session-Id`, else
 * Claude Code's or Codex's own session id), with each request's `Svc-Session-Path`:
 * - `POST /v1/session/query` {timeFilter?: {startTimeUnixMs, endTimeUnixMs}, filter?, offset?,
 *   limit?} → `[Session]`: the sessions with a request in the time range (and matching the
 *   filter), newest last request first; each `{session_id, session_name, first_request_at,
 *   last_request_at, request_count, prompt_tokens, completion_tokens, total_tokens, cost, errors}`
 *   over all of its requests (times ISO-8601, cost USD);
 * - `GET /v1/session/{sessionId}[?offset=&limit=]` → `Session & {requests: [SessionRequest]}`: the
 *   session's requests in time order (default the first 1000, at most 10,000 a page), each with
 *   its `session_path`; 404 when the organization has no request in that session.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { providerLogName } from '../../ingest.ts';
import { readSafeBody } from '../../validation.ts';
import { SessionQueryBody, sessionPage } from './schema.ts';
import { loadSession, querySessions, type SessionRequestRow, type SessionRow } from './store.ts';

/** Longest session id stored (admin/ingest.ts); a longer one in a path cannot exist. */
const MAX_SESSION_ID = 256;

/** A session row in the API's shape (`Session` in admin/openapi.ts). */
function toSession(row: SessionRow): Record<string, unknown> {
  return {
    session_id: row.session_id,
    session_name: row.session_name,
    first_request_at: row.first_request_at.toISOString(),
    last_request_at: row.last_request_at.toISOString(),
    request_count: row.request_count,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    cost: row.cost_usd,
    errors: row.errors,
  };
}

/** A session's request in the API's shape (`SessionRequest` in admin/openapi.ts). */
function toSessionRequest(row: SessionRequestRow): Record<string, unknown> {
  return {
    request_id: row.id,
    request_created_at: row.created_at.toISOString(),
    session_path: row.session_path,
    session_name: row.session_name,
    request_path: row.path,
    provider: providerLogName(row.provider),
    model: row.request_model,
    user_id: row.user_id,
    status: row.status,
    latency_ms: row.delay_ms,
    prompt_tokens: row.prompt_tokens,
    completion_tokens: row.completion_tokens,
    total_tokens: row.total_tokens,
    cost: row.cost_usd,
  };
}

/** Registers the session routes on `router`. `maxBodyBytes` bounds request bodies. */
export function sessionRoutes(router: Router, sql: Sql, maxBodyBytes = 1024 * 1024): void {
  router.post('/v1/session/query', async (ctx) => {
    const body = await readSafeBody(ctx, SessionQueryBody, maxBodyBytes);
    const rows = await querySessions(sql, auth(ctx).organizationId, body);
    ok(ctx, rows.map(toSession));
  });

  router.get('/v1/session/:sessionId', async (ctx) => {
    const id = String((ctx.params as Record<string, string>).sessionId ?? '');
    const page = sessionPage(ctx.query);
    const found = id.length === 0 || id.length > MAX_SESSION_ID || id.includes('\u0000') ? null : await loadSession(sql, auth(ctx).organizationId, id, page);
    if (!found) throw new HttpError(404, `session ${JSON.stringify(id.slice(0, 300))} not found`);
    ok(ctx, { ...toSession(found.session), requests: found.requests.map(toSessionRequest) });
  });
}
