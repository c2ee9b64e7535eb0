/**
 * The SQL of legacy prompts (kind 'legacy' in `prompt`, with `prompt_version` and the `production`
 * label in `prompt_environment`): creation with version 1.0, and moving the production mark.
 * Each change is one transaction; callers then notify proxies (admin/prompt-store.ts).
 */
import type { Sql } from '../../db.ts';
import { HttpError } from '../../http.ts';
import { isUuid } from '../../validation.ts';

/** A `prompt_version` row as the legacy API reads it. */
export interface VersionRow {
  id: string;
  prompt_id: string;
  major_version: number;
  minor_version: number;
  model: string | null;
  body: Record<string, unknown>;
  metadata: Record<string, unknown>;
  parent_prompt_version: string | null;
  experiment_id: string | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Creates a legacy prompt and its version 1.0 (production) in one transaction.
 * @returns the prompt id and the version id.
 * @throws {HttpError} 409 when `userDefinedId` is taken in the organization.
 */
export async function createLegacyPrompt(
  sql: Sql,
  organizationId: string,
  input: { userDefinedId: string; prompt: Record<string, unknown>; metadata: Record<string, unknown> },
): Promise<{ id: string; prompt_version_id: string }> {
  try {
    return await sql.begin(async (t) => {
      const tx = t as unknown as Sql;
      const [p] = await tx<{ id: string }[]>`
        insert into prompt (organization_id, kind, user_defined_id, name)
        values (${organizationId}, 'legacy', ${input.userDefinedId}, ${input.userDefinedId})
        returning id`;
      const model = typeof input.prompt.model === 'string' ? input.prompt.model : null;
      const [v] = await tx<{ id: string }[]>`
        insert into prompt_version (organization_id, prompt_id, major_version, minor_version, model, body, metadata)
        values (${organizationId}, ${p!.id}, 1, 0, ${model}, ${sql.json(input.prompt as never)}, ${sql.json({ ...input.metadata, isProduction: true } as never)})
        returning id`;
      await tx`update prompt set production_version_id = ${v!.id} where id = ${p!.id}`;
      await tx`insert into prompt_environment (prompt_id, environment, version_id) values (${p!.id}, 'production', ${v!.id})`;
      return { id: p!.id, prompt_version_id: v!.id };
    });
  } catch (err) {
    const e = err as { code?: string; constraint_name?: string };
    if (e.code === '23505' && e.constraint_name === 'prompt_user_defined_id_uq') {
      throw new HttpError(409, `a prompt with userDefinedId ${JSON.stringify(input.userDefinedId)} already exists`);
    }
    throw err;
  }
}

/**
 * Moves the production mark of a legacy prompt to `versionId`, in one transaction under a row
 * lock on the prompt: `isProduction` becomes false on `previousVersionId` (and any other marked
 * version), true on `versionId`; `prompt.production_version_id` and the `production` label follow.
 * @returns the promoted version and its prompt id.
 * @throws {HttpError} 404 when the version is unknown in the organization (or not a legacy prompt's);
 *   400 when `previousVersionId` is not a version of the same prompt.
 */
export async function promoteLegacyVersion(sql: Sql, organizationId: string, versionId: string, previousVersionId: string): Promise<VersionRow> {
  return sql.begin(async (t) => {
    const tx = t as unknown as Sql;
    const [target] = await tx<{ prompt_id: string }[]>`
      select v.prompt_id from prompt_version v join prompt p on p.id = v.prompt_id
      where v.id = ${versionId} and p.organization_id = ${organizationId} and p.kind = 'legacy'`;
    if (!target) throw new HttpError(404, `prompt version ${versionId} not found`);
    await tx`select id from prompt where id = ${target.prompt_id} for update`;
    const previous = isUuid(previousVersionId)
      ? await tx`select id from prompt_version where id = ${previousVersionId.toLowerCase()} and prompt_id = ${target.prompt_id}`
      : [];
    if (previous.length === 0) {
      throw new HttpError(400, `invalid body: previousProductionVersionId: ${JSON.stringify(previousVersionId)} is not a version of prompt ${target.prompt_id}`);
    }
    await tx`
      update prompt_version set metadata = jsonb_set(metadata, '{isProduction}', 'false'::jsonb), updated_at = now()
      where prompt_id = ${target.prompt_id} and id <> ${versionId}
        and (id = ${previousVersionId.toLowerCase()} or metadata->'isProduction' = 'true'::jsonb)`;
    const [row] = await tx<VersionRow[]>`
      update prompt_version set metadata = jsonb_set(metadata, '{isProduction}', 'true'::jsonb), updated_at = now()
      where id = ${versionId}
      returning id, prompt_id, major_version, minor_version, model, body, metadata, parent_prompt_version, experiment_id, created_at, updated_at`;
    await tx`update prompt set production_version_id = ${versionId}, updated_at = now() where id = ${target.prompt_id}`;
    await tx`
      insert into prompt_environment (prompt_id, environment, version_id) values (${target.prompt_id}, 'production', ${versionId})
      on conflict (prompt_id, environment) do update set version_id = excluded.version_id, updated_at = now()`;
    return row!;
  }) as Promise<VersionRow>;
}
