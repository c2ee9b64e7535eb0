/**
 * Prompt-2025 over REST. Successes answer with the bare payload (no `{data, error}` envelope, as the
 * seed does); errors use the envelope with their 4xx status. Only prompts of kind '2025' of the
 * caller's organization are visible; any other id answers 404.
 * - `POST /v1/prompt-2025` {name, tags, promptBody} → `{id, versionId}`: a new prompt whose version
 *   0.0 is labelled `production`.
 * - `GET /v1/prompt-2025/id/{promptId}` → `{id, name, tags, created_at}`.
 * - `POST /v1/prompt-2025/update` {promptId, promptVersionId, newMajorVersion, environment?,
 *   commitMessage, promptBody} → `{id}`: a new version from a base version of the prompt (else 400).
 *   New major = highest major + 1, minor 0; new minor = the base's major, highest minor of that
 *   major + 1. `environment` moves that label to the new version (`production` also sets the
 *   prompt's production version). Updates of one prompt serialize on a row lock of the prompt.
 * - `POST /v1/prompt-2025/promote` {promptId, promptVersionId, environment} → `{id}`: moves the
 *   environment's label onto that existing version (`production` also sets the prompt's production
 *   version); 400 when the version is not one of the prompt's.
 * - `DELETE /v1/prompt-2025/{promptId}` → `null`: deletes the prompt, its versions and labels, and
 *   the prompt inputs recorded on its requests.
 * - `POST /v1/prompt-2025/query` {search?, tagsFilter?, page?, pageSize?} → Prompt2025[].
 * - `POST /v1/prompt-2025/query/versions` {promptId, majorVersion?} → Prompt2025Version[].
 * - `POST /v1/prompt-2025/query/environment-version` {promptId, environment} → Prompt2025Version.
 * - `GET /v1/prompt-2025/{promptVersionId}/prompt-body` → the version's chat body.
 * Every change tells proxies to drop the prompt from their caches. A `promptBody` whose messages
 * hold a malformed `{{svc:` placeholder is a 400 naming it (../../prompt-store.ts).
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Sql } from '../../db.ts';
import { auth, HttpError } from '../../http.ts';
import { checkPromptPlaceholders, notifyPromptChanged } from '../../prompt-store.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { CreatePrompt2025Body, EnvironmentVersionBody, PromotePrompt2025Body, QueryPrompts2025Body, QueryVersionsBody, UpdatePrompt2025Body } from './schema.ts';
import {
  createPrompt2025,
  deletePrompt2025,
  environmentVersion,
  findPrompt2025,
  listVersions,
  notFound,
  promoteVersion2025,
  promptExists,
  queryPrompts2025,
  updatePrompt2025,
  versionBody,
  type VersionRow,
} from './store.ts';

/** Answers 200 with a bare JSON payload (prompt-2025 successes carry no envelope). */
function bare(ctx: Context, payload: unknown): void {
  ctx.status = 200;
  if (payload === null) {
    ctx.type = 'application/json';
    ctx.body = 'null';
  } else {
    ctx.body = payload;
  }
}

/** Maps a version row to the reference `Prompt2025Version` (no `prompt_body`; see the prompt-body route). */
export function toPrompt2025Version(row: VersionRow): Record<string, unknown> {
  const bodyModel = row.body && typeof row.body.model === 'string' ? row.body.model : '';
  return {
    id: row.id,
    model: row.model ?? bodyModel,
    prompt_id: row.prompt_id,
    major_version: row.major_version,
    minor_version: row.minor_version,
    commit_message: row.commit_message ?? '',
    environments: row.environments ?? [],
    created_at: row.created_at.toISOString(),
  };
}

/** Registers the prompt-2025 routes. `maxBodyBytes` bounds request bodies. */
export function prompt2025Routes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/prompt-2025', async (ctx) => {
    const body = await readSafeBody(ctx, CreatePrompt2025Body, maxBodyBytes);
    checkPromptPlaceholders(body.promptBody, 'promptBody');
    const organizationId = auth(ctx).organizationId;
    const created = await createPrompt2025(sql, organizationId, body);
    await notifyPromptChanged(sql, organizationId, created.id);
    bare(ctx, created);
  });

  router.get('/v1/prompt-2025/id/:promptId', async (ctx) => {
    const id = uuidParam(ctx, 'promptId', 'prompt');
    const row = await findPrompt2025(sql, auth(ctx).organizationId, id);
    if (!row) throw notFound(id);
    bare(ctx, { id: row.id, name: row.name, tags: row.tags, created_at: row.created_at.toISOString() });
  });

  router.post('/v1/prompt-2025/update', async (ctx) => {
    const body = await readSafeBody(ctx, UpdatePrompt2025Body, maxBodyBytes);
    checkPromptPlaceholders(body.promptBody, 'promptBody');
    const organizationId = auth(ctx).organizationId;
    const created = await updatePrompt2025(sql, organizationId, body);
    await notifyPromptChanged(sql, organizationId, body.promptId.toLowerCase());
    bare(ctx, created);
  });

  router.post('/v1/prompt-2025/promote', async (ctx) => {
    const body = await readSafeBody(ctx, PromotePrompt2025Body, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const promoted = await promoteVersion2025(sql, organizationId, body);
    await notifyPromptChanged(sql, organizationId, body.promptId.toLowerCase());
    bare(ctx, promoted);
  });

  router.delete('/v1/prompt-2025/:promptId', async (ctx) => {
    const id = uuidParam(ctx, 'promptId', 'prompt');
    const organizationId = auth(ctx).organizationId;
    if (!(await deletePrompt2025(sql, organizationId, id))) throw notFound(id);
    await notifyPromptChanged(sql, organizationId, id);
    bare(ctx, null);
  });

  router.post('/v1/prompt-2025/query', async (ctx) => {
    const body = await readSafeBody(ctx, QueryPrompts2025Body, maxBodyBytes);
    const rows = await queryPrompts2025(sql, auth(ctx).organizationId, body);
    bare(ctx, rows.map((r) => ({ id: r.id, name: r.name, tags: r.tags, created_at: r.created_at.toISOString() })));
  });

  router.post('/v1/prompt-2025/query/versions', async (ctx) => {
    const body = await readSafeBody(ctx, QueryVersionsBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const promptId = body.promptId.toLowerCase();
    if (!(await promptExists(sql, organizationId, promptId))) throw notFound(body.promptId);
    bare(ctx, (await listVersions(sql, organizationId, promptId, body.majorVersion)).map(toPrompt2025Version));
  });

  router.post('/v1/prompt-2025/query/environment-version', async (ctx) => {
    const body = await readSafeBody(ctx, EnvironmentVersionBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const promptId = body.promptId.toLowerCase();
    if (!(await promptExists(sql, organizationId, promptId))) throw notFound(body.promptId);
    const row = await environmentVersion(sql, organizationId, promptId, body.environment);
    if (!row) throw new HttpError(404, `environment ${JSON.stringify(body.environment)} not found in prompt ${promptId}`);
    bare(ctx, toPrompt2025Version(row));
  });

  router.get('/v1/prompt-2025/:promptVersionId/prompt-body', async (ctx) => {
    const id = uuidParam(ctx, 'promptVersionId', 'prompt version');
    const row = await versionBody(sql, auth(ctx).organizationId, id);
    if (!row) throw new HttpError(404, `prompt version ${id} not found`);
    bare(ctx, row.body);
  });
}
