/**
 * Legacy prompts over REST (the seed's prompt API; prompt-2025 lives in `../prompts-2025/`):
 * - `POST /v1/prompt/create` {userDefinedId, prompt, metadata} → `{id, prompt_version_id}`: the prompt
 *   and its first version 1.0, marked production (`metadata.isProduction = true`,
 *   `prompt.production_version_id`, and the `production` environment label); a duplicate
 *   userDefinedId in the organization → 409; a malformed `{{svc:` placeholder in its messages → 400.
 * - `POST /v1/prompt/version/{promptVersionId}/promote` {previousProductionVersionId} → the version
 *   record (PromptVersionResult): in one transaction the production mark leaves the previous version
 *   (which must be a version of the same prompt, else 400) and lands on this one.
 * Both run in one transaction each and tell proxies to drop the prompt from their caches.
 */
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, ok } from '../../http.ts';
import { checkPromptPlaceholders, notifyPromptChanged } from '../../prompt-store.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { CreatePromptBody, PromoteBody } from './schema.ts';
import { createLegacyPrompt, promoteLegacyVersion, type VersionRow } from './store.ts';

/**
 * Maps a version row to the reference `PromptVersionResult`: `prompt_v2` is the prompt id,
 * `svc_template` the version's body as JSON text, `model` the version's model (or '').
 */
export function toPromptVersionResult(row: VersionRow): Record<string, unknown> {
  const bodyModel = row.body && typeof row.body.model === 'string' ? row.body.model : '';
  return {
    id: row.id,
    minor_version: row.minor_version,
    major_version: row.major_version,
    prompt_v2: row.prompt_id,
    model: row.model ?? bodyModel,
    svc_template: JSON.stringify(row.body),
    created_at: row.created_at.toISOString(),
    metadata: row.metadata ?? {},
    parent_prompt_version: row.parent_prompt_version,
    experiment_id: row.experiment_id,
    updated_at: row.updated_at.toISOString(),
  };
}

/** Registers the legacy prompt routes. `maxBodyBytes` bounds request bodies. */
export function promptRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/prompt/create', async (ctx) => {
    const body = await readSafeBody(ctx, CreatePromptBody, maxBodyBytes);
    checkPromptPlaceholders(body.prompt, 'prompt');
    const organizationId = auth(ctx).organizationId;
    const created = await createLegacyPrompt(sql, organizationId, body);
    await notifyPromptChanged(sql, organizationId, created.id);
    ok(ctx, created);
  });

  router.post('/v1/prompt/version/:promptVersionId/promote', async (ctx) => {
    const id = uuidParam(ctx, 'promptVersionId', 'prompt version');
    const body = await readSafeBody(ctx, PromoteBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const row = await promoteLegacyVersion(sql, organizationId, id, body.previousProductionVersionId);
    await notifyPromptChanged(sql, organizationId, row.prompt_id);
    ok(ctx, toPromptVersionResult(row));
  });
}
