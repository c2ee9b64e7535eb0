/**
 * API keys over REST:
 * - `POST /v1/api-keys` {name} → `{id, key, name, prefix, created_at}`: the key is shown this once;
 * - `GET /v1/api-keys[?includeRevoked=true]` → `[{id, name, prefix, created_at, last_used_at,
 *   revoked, revoked_at}]`, oldest first: the live keys, and the revoked ones too with
 *   `includeRevoked=true` (never the key or its hash; times ISO-8601, null: never);
 * - `DELETE /v1/api-keys/{id}` revokes a live key (404 when unknown or already revoked).
 * Creation and revocation are pushed to every connected proxy through the control plane.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { CreateKeyBody } from './schema.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './store.ts';

/**
 * The `includeRevoked` query parameter: absent or `false` → false, `true` → true.
 * @throws {HttpError} 400 naming `includeRevoked` for any other value (or the parameter given twice).
 */
function includeRevoked(value: string | string[] | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new HttpError(400, 'invalid query: includeRevoked: expected true or false');
}

/** Registers `/v1/api-keys` routes. `maxBodyBytes` bounds request bodies. */
export function apiKeyRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/api-keys', async (ctx) => {
    const body = await readSafeBody(ctx, CreateKeyBody, maxBodyBytes);
    const created = await createApiKey(sql, auth(ctx).organizationId, body.name);
    ok(ctx, created);
  });

  router.get('/v1/api-keys', async (ctx) => {
    const rows = await listApiKeys(sql, auth(ctx).organizationId, includeRevoked(ctx.query.includeRevoked));
    ok(
      ctx,
      rows.map((r) => ({
        id: r.id,
        name: r.name,
        prefix: r.prefix,
        created_at: r.created_at.toISOString(),
        last_used_at: r.last_used_at ? r.last_used_at.toISOString() : null,
        revoked: r.revoked_at !== null,
        revoked_at: r.revoked_at ? r.revoked_at.toISOString() : null,
      })),
    );
  });

  router.delete('/v1/api-keys/:id', async (ctx) => {
    const id = uuidParam(ctx, 'id', 'API key');
    const revoked = await revokeApiKey(sql, auth(ctx).organizationId, id);
    if (!revoked) throw new HttpError(404, `API key ${id} not found`);
    ok(ctx, null);
  });
}
