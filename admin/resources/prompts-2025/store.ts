/**
 * The SQL of prompt-2025s (kind '2025' in `prompt`, versions in `prompt_version`, environment labels
 * in `prompt_environment`): creation, versioning, promotion, deletion, and the reads. Every statement is scoped
 * to one organization and to kind '2025'.
 */
import { escapeLike, type Fragment, type Sql } from '../../db.ts';
import { HttpError } from '../../http.ts';
import { isUuid } from '../../validation.ts';

/** A `prompt_version` row of a prompt-2025, with the environment labels on it. */
export interface VersionRow {
  id: string;
  prompt_id: string;
  major_version: number;
  minor_version: number;
  model: string | null;
  commit_message: string | null;
  created_at: Date;
  body: Record<string, unknown>;
  environments: string[];
}

/** The organization's prompt-2025 versions matching `condition` (on `v`), newest version first. */
async function selectVersions(sql: Sql, organizationId: string, condition: Fragment): Promise<VersionRow[]> {
  return sql<VersionRow[]>`
    select v.id, v.prompt_id, v.major_version, v.minor_version, v.model, v.commit_message, v.created_at, v.body,
      array(select e.environment from prompt_environment e where e.version_id = v.id order by e.environment) as environments
    from prompt_version v join prompt p on p.id = v.prompt_id
    where p.organization_id = ${organizationId} and p.kind = '2025' and ${condition}
    order by v.major_version desc, v.minor_version desc`;
}

/** True when prompt-2025 `promptId` exists in the organization (optionally locking its row). */
export async function promptExists(sql: Sql, organizationId: string, promptId: string, lock = false): Promise<boolean> {
  if (!isUuid(promptId)) return false;
  const rows = lock
    ? await sql`select id from prompt where id = ${promptId} and organization_id = ${organizationId} and kind = '2025' for update`
    : await sql`select id from prompt where id = ${promptId} and organization_id = ${organizationId} and kind = '2025'`;
  return rows.length > 0;
}

/**
 * A `text[]` value from strings, sent as one jsonb parameter (exact for any characters, and
 * independent of whether postgres.js has loaded the server's array types yet).
 */
const textArray = (sql: Sql, values: string[]): Fragment => sql`array(select jsonb_array_elements_text(${sql.json(values as never)}::jsonb))`;

/** The 404 of an unknown prompt-2025 id (as the caller wrote it). */
export const notFound = (id: string): HttpError => new HttpError(404, `prompt ${JSON.stringify(id)} not found`);

/**
 * Creates a prompt-2025 with version 0.0 labelled `production`, in one transaction.
 * @returns the prompt id and the version id.
 */
export async function createPrompt2025(
  sql: Sql,
  organizationId: string,
  input: { name: string; tags: string[]; promptBody: Record<string, unknown> },
): Promise<{ id: string; versionId: string }> {
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const [p] = await tx<{ id: string }[]>`
      insert into prompt (organization_id, kind, name, tags)
      values (${organizationId}, '2025', ${input.name}, ${textArray(sql, input.tags)})
      returning id`;
    const model = typeof input.promptBody.model === 'string' ? input.promptBody.model : null;
    const [v] = await tx<{ id: string }[]>`
      insert into prompt_version (organization_id, prompt_id, major_version, minor_version, model, body, commit_message)
      values (${organizationId}, ${p!.id}, 0, 0, ${model}, ${sql.json(input.promptBody as never)}, 'Initial version')
      returning id`;
    await tx`insert into prompt_environment (prompt_id, environment, version_id) values (${p!.id}, 'production', ${v!.id})`;
    await tx`update prompt set production_version_id = ${v!.id} where id = ${p!.id}`;
    return { id: p!.id, versionId: v!.id };
  }) as Promise<{ id: string; versionId: string }>;
}

/**
 * Creates a new version of a prompt-2025 from a base version, optionally moving an environment
 * label to it (`production` also sets the prompt's production version), in one transaction that
 * holds a row lock on the prompt so concurrent updates never compute the same number. New major:
 * highest major + 1, minor 0; new minor: the base's major, highest minor of that major + 1.
 * @returns the new version's id.
 * @throws {HttpError} 404 unknown prompt; 400 when the base version is not a version of the prompt.
 */
export async function updatePrompt2025(
  sql: Sql,
  organizationId: string,
  input: { promptId: string; promptVersionId: string; newMajorVersion: boolean; environment?: string; commitMessage: string; promptBody: Record<string, unknown> },
): Promise<{ id: string }> {
  const promptId = input.promptId.toLowerCase();
  const baseId = input.promptVersionId.toLowerCase();
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    if (!(await promptExists(tx, organizationId, promptId, true))) throw notFound(input.promptId);
    const [base] = isUuid(baseId)
      ? await tx<{ major_version: number }[]>`select major_version from prompt_version where id = ${baseId} and prompt_id = ${promptId}`
      : [];
    if (!base) throw new HttpError(400, `invalid body: promptVersionId: ${JSON.stringify(input.promptVersionId)} is not a version of prompt ${promptId}`);
    let major: number;
    let minor: number;
    if (input.newMajorVersion) {
      const [row] = await tx<{ next: number }[]>`select coalesce(max(major_version), -1) + 1 as next from prompt_version where prompt_id = ${promptId}`;
      major = row!.next;
      minor = 0;
    } else {
      major = base.major_version;
      const [row] = await tx<{ next: number }[]>`
        select coalesce(max(minor_version), -1) + 1 as next from prompt_version where prompt_id = ${promptId} and major_version = ${major}`;
      minor = row!.next;
    }
    const model = typeof input.promptBody.model === 'string' ? input.promptBody.model : null;
    const [v] = await tx<{ id: string }[]>`
      insert into prompt_version (organization_id, prompt_id, major_version, minor_version, model, body, commit_message, parent_prompt_version)
      values (${organizationId}, ${promptId}, ${major}, ${minor}, ${model}, ${sql.json(input.promptBody as never)}, ${input.commitMessage}, ${baseId})
      returning id`;
    if (input.environment !== undefined) {
      await tx`
        insert into prompt_environment (prompt_id, environment, version_id) values (${promptId}, ${input.environment}, ${v!.id})
        on conflict (prompt_id, environment) do update set version_id = excluded.version_id, updated_at = now()`;
    }
    if (input.environment === 'production') {
      await tx`update prompt set production_version_id = ${v!.id}, updated_at = now() where id = ${promptId}`;
    } else {
      await tx`update prompt set updated_at = now() where id = ${promptId}`;
    }
    return { id: v!.id };
  }) as Promise<{ id: string }>;
}

/**
 * Moves environment label `environment` onto an existing version of prompt-2025 `promptId`
 * (`production` also sets the prompt's production version), in one transaction holding the
 * prompt's row lock, as version updates do.
 * @throws {HttpError} 404 unknown prompt; 400 when the version is not a version of the prompt.
 */
export async function promoteVersion2025(
  sql: Sql,
  organizationId: string,
  input: { promptId: string; promptVersionId: string; environment: string },
): Promise<{ id: string }> {
  const promptId = input.promptId.toLowerCase();
  const versionId = input.promptVersionId.toLowerCase();
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    if (!(await promptExists(tx, organizationId, promptId, true))) throw notFound(input.promptId);
    const [version] = isUuid(versionId) ? await tx<{ id: string }[]>`select id from prompt_version where id = ${versionId} and prompt_id = ${promptId}` : [];
    if (!version) throw new HttpError(400, `invalid body: promptVersionId: ${JSON.stringify(input.promptVersionId)} is not a version of prompt ${promptId}`);
    await tx`
      insert into prompt_environment (prompt_id, environment, version_id) values (${promptId}, ${input.environment}, ${versionId})
      on conflict (prompt_id, environment) do update set version_id = excluded.version_id, updated_at = now()`;
    if (input.environment === 'production') {
      await tx`update prompt set production_version_id = ${versionId}, updated_at = now() where id = ${promptId}`;
    } else {
      await tx`update prompt set updated_at = now() where id = ${promptId}`;
    }
    return { id: versionId };
  }) as Promise<{ id: string }>;
}

/**
 * Permanently deletes a prompt-2025: its versions and labels (cascade) and the prompt inputs
 * recorded on its logged requests (the request log itself stays), in one transaction.
 * @returns false when the prompt is unknown in the organization.
 */
export async function deletePrompt2025(sql: Sql, organizationId: string, promptId: string): Promise<boolean> {
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    if (!(await promptExists(tx, organizationId, promptId, true))) return false;
    await tx`update request_log set prompt_inputs = null where organization_id = ${organizationId} and prompt_id = ${promptId} and prompt_inputs is not null`;
    await tx`delete from prompt where id = ${promptId}`;
    return true;
  }) as Promise<boolean>;
}

/** A prompt-2025 as listed: id, name, tags and creation time. */
export interface PromptRow {
  id: string;
  name: string;
  tags: string[];
  created_at: Date;
}

/** Prompt-2025 `promptId` of the organization, or null when unknown. */
export async function findPrompt2025(sql: Sql, organizationId: string, promptId: string): Promise<PromptRow | null> {
  const [row] = await sql<PromptRow[]>`
      select id, name, tags, created_at from prompt where id = ${promptId} and organization_id = ${organizationId} and kind = '2025'`;
  return row ?? null;
}

/**
 * One page of the organization's prompt-2025s, newest first: `search` matches the name or a tag
 * as a case-insensitive substring; every tag of `tagsFilter` must be on the prompt.
 * @param query `page` is 0-based; `pageSize` defaults to 100.
 */
export async function queryPrompts2025(
  sql: Sql,
  organizationId: string,
  query: { search?: string; tagsFilter?: string[]; page?: number; pageSize?: number },
): Promise<PromptRow[]> {
  const conditions: Fragment[] = [sql`organization_id = ${organizationId}`, sql`kind = '2025'`];
  if (query.search) {
    const pattern = `%${escapeLike(query.search)}%`;
    conditions.push(sql`(name ilike ${pattern} or exists (select 1 from unnest(tags) t where t ilike ${pattern}))`);
  }
  if (query.tagsFilter && query.tagsFilter.length > 0) conditions.push(sql`tags @> ${textArray(sql, query.tagsFilter)}`);
  const pageSize = query.pageSize ?? 100;
  return sql<PromptRow[]>`
      select id, name, tags, created_at from prompt
      where ${conditions.reduce((a, b) => sql`${a} and ${b}`)}
      order by created_at desc, id desc
      limit ${pageSize} offset ${(query.page ?? 0) * pageSize}`;
}

/** The versions of prompt `promptId` (of major version `majorVersion` when given), newest first. */
export async function listVersions(sql: Sql, organizationId: string, promptId: string, majorVersion: number | undefined): Promise<VersionRow[]> {
  const condition = majorVersion === undefined ? sql`v.prompt_id = ${promptId}` : sql`v.prompt_id = ${promptId} and v.major_version = ${majorVersion}`;
  return selectVersions(sql, organizationId, condition);
}

/** The version of prompt `promptId` labelled `environment`, or null when no version is. */
export async function environmentVersion(sql: Sql, organizationId: string, promptId: string, environment: string): Promise<VersionRow | null> {
  const [row] = await selectVersions(
    sql,
    organizationId,
    sql`v.id = (select e.version_id from prompt_environment e where e.prompt_id = ${promptId} and e.environment = ${environment})`,
  );
  return row ?? null;
}

/** The chat body of prompt-2025 version `versionId` of the organization, or null when unknown. */
export async function versionBody(sql: Sql, organizationId: string, versionId: string): Promise<{ body: Record<string, unknown> } | null> {
  const [row] = await sql<{ body: Record<string, unknown> }[]>`
      select v.body from prompt_version v join prompt p on p.id = v.prompt_id
      where v.id = ${versionId} and p.organization_id = ${organizationId} and p.kind = '2025'`;
  return row ?? null;
}
