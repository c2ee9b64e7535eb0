/**
 * API keys over REST: create (the key is shown once), list (never the key or its hash), revoke.
 * Creation and revocation are pushed to every connected proxy through the control plane.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readBody, uuidParam } from '../../validation.ts';
import { CreateKeyBody } from './schema.ts';
import { createApiKey, listApiKeys, revokeApiKey } from './store.ts';

/** Registers `/v1/api-keys` routes. `maxBodyBytes` bounds request bodies. */
export function apiKeyRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/api-keys', async (ctx) => {
    const body = await readBody(ctx, CreateKeyBody, maxBodyBytes);
    const created = await createApiKey(sql, auth(ctx).organizationId, body.name);
    ok(ctx, created);
  });

  router.get('/v1/api-keys', async (ctx) => {
    const rows = await listApiKeys(sql, auth(ctx).organizationId);
    ok(ctx, rows.map((r) => ({ ...r, created_at: r.created_at.toISOString(), last_used_at: r.last_used_at ? r.last_used_at.toISOString() : null })));
  });

  router.delete('/v1/api-keys/:id', async (ctx) => {
    const id = uuidParam(ctx, 'id', 'API key');
    const revoked = await revokeApiKey(sql, auth(ctx).organizationId, id);
    if (!revoked) throw new HttpError(404, `API key ${id} not found`);
    ok(ctx, null);
  });
}
