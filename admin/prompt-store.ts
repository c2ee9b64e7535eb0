/**
 * Prompt lookups shared by the REST API and the control plane, the change notification
 * (`svc_prompts`) that tells proxies to drop a prompt from their cache, and the placeholder check
 * every REST route that saves a version runs.
 */
import { promptBodyPlaceholderProblem } from '../shared/prompt-placeholders.ts';
import type { Sql } from './db.ts';
import { HttpError } from './http.ts';
import { environmentNotFound, promptNotFound, versionNotFound } from '../shared/prompt-lookup.ts';
import { isUuid } from './validation.ts';

/** NOTIFY channel for prompt changes; payload `{organizationId, promptId}`. */
export const PROMPTS_CHANNEL = 'svc_prompts';

/** Publishes that a prompt's versions or environment labels changed. */
export async function notifyPromptChanged(sql: Sql, organizationId: string, promptId: string): Promise<void> {
  await sql.notify(PROMPTS_CHANNEL, JSON.stringify({ organizationId, promptId }));
}

/**
 * Refuses a version body whose messages hold text that starts like a placeholder (`{{svc:`) but is
 * not a valid `{{svc:<name>:<type>}}` (../shared/prompt-placeholders.ts): the proxy would send it to
 * the provider as written.
 * @param member the body's member in the REST request (`promptBody`, `prompt`), for the message.
 * @throws {HttpError} 400 naming the placeholder, where it is, and what is wrong.
 */
export function checkPromptPlaceholders(body: { messages?: unknown }, member: string): void {
  const problem = promptBodyPlaceholderProblem(body);
  if (problem !== null) throw new HttpError(400, `${member}.${problem}`);
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
 * @returns the version, or `{error}` naming what is unknown (prompt, version or environment), worded by
 *   shared/prompt-lookup.ts so the proxy can name the request member.
 */
export async function resolvePromptVersion(
  sql: Sql,
  organizationId: string,
  promptId: string,
  versionId: string | null,
  environment: string | null,
): Promise<ResolvedPromptVersion | { error: string }> {
  if (!isUuid(promptId)) return { error: promptNotFound(promptId) };
  const [prompt] = await sql<{ id: string }[]>`select id from prompt where id = ${promptId} and organization_id = ${organizationId}`;
  if (!prompt) return { error: promptNotFound(promptId) };
  type Row = { id: string; major_version: number; minor_version: number; body: Record<string, unknown> };
  let row: Row | undefined;
  if (versionId) {
    if (!isUuid(versionId)) return { error: versionNotFound(versionId, promptId) };
    [row] = await sql<Row[]>`
      select id, major_version, minor_version, body from prompt_version where id = ${versionId} and prompt_id = ${promptId}`;
    if (!row) return { error: versionNotFound(versionId, promptId) };
  } else {
    const env = environment ?? 'production';
    [row] = await sql<Row[]>`
      select v.id, v.major_version, v.minor_version, v.body
      from prompt_environment e join prompt_version v on v.id = e.version_id
      where e.prompt_id = ${promptId} and e.environment = ${env}`;
    if (!row) return { error: environmentNotFound(env, promptId) };
  }
  return { promptId, versionId: row.id, version: `${row.major_version}.${row.minor_version}`, body: row.body };
}
