/**
 * Prompt lookups shared by the REST API and the control plane, and the change notification
 * (`svc_prompts`) that tells proxies to drop a prompt from their cache.
 */
import type { Sql } from './db.ts';
import { isUuid } from './validation.ts';

/** NOTIFY channel for prompt changes; payload `{organizationId, promptId}`. */
export const PROMPTS_CHANNEL = 'svc_prompts';

/** Publishes that a prompt's versions or environment labels changed. */
export async function notifyPromptChanged(sql: Sql, organizationId: string, promptId: string): Promise<void> {
  await sql.notify(PROMPTS_CHANNEL, JSON.stringify({ organizationId, promptId }));
}

/** A resolved prompt version as the proxy uses it. */
export interface ResolvedPromptVersion {
  promptId: string;
  versionId: string;
  /** `major.minor`. */
  version: string;
  body: Record<string, unknown>;
}

/**
 * Finds the version of a prompt to use: `versionId` when given, else the version labelled
 * `environment` (default `production`).
 * @returns the version, or `{error}` naming what is unknown (prompt, version or environment).
 */
export async function resolvePromptVersion(
  sql: Sql,
  organizationId: string,
  promptId: string,
  versionId: string | null,
  environment: string | null,
): Promise<ResolvedPromptVersion | { error: string }> {
  if (!isUuid(promptId)) return { error: `prompt ${JSON.stringify(promptId)} not found` };
  const [prompt] = await sql<{ id: string }[]>`select id from prompt where id = ${promptId} and organization_id = ${organizationId}`;
  if (!prompt) return { error: `prompt ${promptId} not found` };
  type Row = { id: string; major_version: number; minor_version: number; body: Record<string, unknown> };
  let row: Row | undefined;
  if (versionId) {
    if (!isUuid(versionId)) return { error: `version ${JSON.stringify(versionId)} not found in prompt ${promptId}` };
    [row] = await sql<Row[]>`
      select id, major_version, minor_version, body from prompt_version where id = ${versionId} and prompt_id = ${promptId}`;
    if (!row) return { error: `version ${versionId} not found in prompt ${promptId}` };
  } else {
    const env = environment ?? 'production';
    [row] = await sql<Row[]>`
      select v.id, v.major_version, v.minor_version, v.body
      from prompt_environment e join prompt_version v on v.id = e.version_id
      where e.prompt_id = ${promptId} and e.environment = ${env}`;
    if (!row) return { error: `environment ${JSON.stringify(env)} not found in prompt ${promptId}` };
  }
  return { promptId, versionId: row.id, version: `${row.major_version}.${row.minor_version}`, body: row.body };
}
