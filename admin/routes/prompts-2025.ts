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
 * - `DELETE /v1/prompt-2025/{promptId}` → `null`: deletes the prompt, its versions and labels, and
 *   the prompt inputs recorded on its requests.
 * - `POST /v1/prompt-2025/query` {search?, tagsFilter?, page?, pageSize?} → Prompt2025[].
 * - `POST /v1/prompt-2025/query/versions` {promptId, majorVersion?} → Prompt2025Version[].
 * - `POST /v1/prompt-2025/query/environment-version` {promptId, environment} → Prompt2025Version.
 * - `GET /v1/prompt-2025/{promptVersionId}/prompt-body` → the version's chat body.
 * Every change tells proxies to drop the prompt from their caches.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import {
  any,
  array,
  boolean,
  enums,
  integer,
  literal,
  max,
  min,
  nullable,
  number,
  object,
  optional,
  record,
  size,
  string,
  type,
  union,
} from 'superstruct';
import type { Sql } from '../db.ts';
import { escapeLike, readSafeBody, sizedText, Text, type Fragment } from '../filter.ts';
import { auth, HttpError, isUuid, uuidParam } from '../http.ts';
import { notifyPromptChanged } from '../prompt-store.ts';

const ChatMessage = type({
  role: string(),
  content: nullable(union([string(), array(type({ type: string(), text: optional(string()), image_url: optional(type({ url: string() })) }))])),
  name: optional(string()),
  tool_call_id: optional(string()),
  tool_calls: optional(array(type({ id: string(), type: literal('function'), function: type({ name: string(), arguments: string() }) }))),
});

/** The reference `OpenAIChatRequest` (a prompt-2025 version body): known members only (400 on others). */
export const PromptBodyStruct = object({
  model: optional(string()),
  messages: optional(array(ChatMessage)),
  temperature: optional(number()),
  top_p: optional(number()),
  max_tokens: optional(number()),
  max_completion_tokens: optional(number()),
  stream: optional(boolean()),
  stop: optional(union([array(string()), string()])),
  tools: optional(
    array(type({ type: literal('function'), function: type({ name: string(), description: optional(string()), parameters: optional(record(string(), any())), strict: optional(boolean()) }) })),
  ),
  tool_choice: optional(union([enums(['none', 'auto', 'required']), type({ type: string(), function: optional(type({ name: string(), type: literal('function') })) })])),
  parallel_tool_calls: optional(boolean()),
  reasoning_effort: optional(enums(['minimal', 'low', 'medium', 'high'])),
  verbosity: optional(enums(['low', 'medium', 'high'])),
  frequency_penalty: optional(number()),
  presence_penalty: optional(number()),
  logit_bias: optional(record(string(), number())),
  logprobs: optional(boolean()),
  top_logprobs: optional(number()),
  n: optional(number()),
  modalities: optional(array(string())),
  prediction: optional(any()),
  audio: optional(any()),
  response_format: optional(type({ type: string(), json_schema: optional(any()) })),
  seed: optional(number()),
  service_tier: optional(string()),
  store: optional(boolean()),
  stream_options: optional(any()),
  metadata: optional(record(string(), string())),
  user: optional(string()),
  function_call: optional(union([string(), type({ name: string() })])),
  functions: optional(array(any())),
});

const Tags = size(array(sizedText(256)), 0, 100);
const EnvironmentName = sizedText(100);

/** Body of `POST /v1/prompt-2025`. */
export const CreatePrompt2025Body = type({ name: sizedText(1000), tags: Tags, promptBody: PromptBodyStruct });
/** Body of `POST /v1/prompt-2025/update`. */
export const UpdatePrompt2025Body = type({
  promptId: Text,
  promptVersionId: Text,
  newMajorVersion: boolean(),
  environment: optional(EnvironmentName),
  commitMessage: size(Text, 0, 10_000),
  promptBody: PromptBodyStruct,
});
/** Body of `POST /v1/prompt-2025/query` (all optional; `page` is 0-based, `pageSize` 1–1000, default 100). */
export const QueryPrompts2025Body = type({
  search: optional(size(Text, 0, 1000)),
  tagsFilter: optional(Tags),
  page: optional(max(min(integer(), 0), 1_000_000)),
  pageSize: optional(max(min(integer(), 1), 1000)),
});
/** Body of `POST /v1/prompt-2025/query/versions`. */
export const QueryVersionsBody = type({ promptId: Text, majorVersion: optional(max(min(integer(), 0), 2_147_483_647)) });
/** Body of `POST /v1/prompt-2025/query/environment-version`. */
export const EnvironmentVersionBody = type({ promptId: Text, environment: EnvironmentName });

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

interface VersionRow {
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
async function promptExists(sql: Sql, organizationId: string, promptId: string, lock = false): Promise<boolean> {
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

const notFound = (id: string) => new HttpError(404, `prompt ${JSON.stringify(id)} not found`);

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
 * Creates a new version of a prompt-2025 from a base version (see the module comment for the
 * numbering), optionally moving an environment label to it, in one transaction that holds a row
 * lock on the prompt so concurrent updates never compute the same number.
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

/** Registers the prompt-2025 routes. `maxBodyBytes` bounds request bodies. */
export function prompt2025Routes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/prompt-2025', async (ctx) => {
    const body = await readSafeBody(ctx, CreatePrompt2025Body, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const created = await createPrompt2025(sql, organizationId, body);
    await notifyPromptChanged(sql, organizationId, created.id);
    bare(ctx, created);
  });

  router.get('/v1/prompt-2025/id/:promptId', async (ctx) => {
    const id = uuidParam(ctx, 'promptId', 'prompt');
    const [row] = await sql<{ id: string; name: string; tags: string[]; created_at: Date }[]>`
      select id, name, tags, created_at from prompt where id = ${id} and organization_id = ${auth(ctx).organizationId} and kind = '2025'`;
    if (!row) throw notFound(id);
    bare(ctx, { id: row.id, name: row.name, tags: row.tags, created_at: row.created_at.toISOString() });
  });

  router.post('/v1/prompt-2025/update', async (ctx) => {
    const body = await readSafeBody(ctx, UpdatePrompt2025Body, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const created = await updatePrompt2025(sql, organizationId, body);
    await notifyPromptChanged(sql, organizationId, body.promptId.toLowerCase());
    bare(ctx, created);
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
    const conditions: Fragment[] = [sql`organization_id = ${auth(ctx).organizationId}`, sql`kind = '2025'`];
    if (body.search) {
      const pattern = `%${escapeLike(body.search)}%`;
      conditions.push(sql`(name ilike ${pattern} or exists (select 1 from unnest(tags) t where t ilike ${pattern}))`);
    }
    if (body.tagsFilter && body.tagsFilter.length > 0) conditions.push(sql`tags @> ${textArray(sql, body.tagsFilter)}`);
    const pageSize = body.pageSize ?? 100;
    const rows = await sql<{ id: string; name: string; tags: string[]; created_at: Date }[]>`
      select id, name, tags, created_at from prompt
      where ${conditions.reduce((a, b) => sql`${a} and ${b}`)}
      order by created_at desc, id desc
      limit ${pageSize} offset ${(body.page ?? 0) * pageSize}`;
    bare(ctx, rows.map((r) => ({ id: r.id, name: r.name, tags: r.tags, created_at: r.created_at.toISOString() })));
  });

  router.post('/v1/prompt-2025/query/versions', async (ctx) => {
    const body = await readSafeBody(ctx, QueryVersionsBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const promptId = body.promptId.toLowerCase();
    if (!(await promptExists(sql, organizationId, promptId))) throw notFound(body.promptId);
    const condition = body.majorVersion === undefined ? sql`v.prompt_id = ${promptId}` : sql`v.prompt_id = ${promptId} and v.major_version = ${body.majorVersion}`;
    bare(ctx, (await selectVersions(sql, organizationId, condition)).map(toPrompt2025Version));
  });

  router.post('/v1/prompt-2025/query/environment-version', async (ctx) => {
    const body = await readSafeBody(ctx, EnvironmentVersionBody, maxBodyBytes);
    const organizationId = auth(ctx).organizationId;
    const promptId = body.promptId.toLowerCase();
    if (!(await promptExists(sql, organizationId, promptId))) throw notFound(body.promptId);
    const [row] = await selectVersions(
      sql,
      organizationId,
      sql`v.id = (select e.version_id from prompt_environment e where e.prompt_id = ${promptId} and e.environment = ${body.environment})`,
    );
    if (!row) throw new HttpError(404, `environment ${JSON.stringify(body.environment)} not found in prompt ${promptId}`);
    bare(ctx, toPrompt2025Version(row));
  });

  router.get('/v1/prompt-2025/:promptVersionId/prompt-body', async (ctx) => {
    const id = uuidParam(ctx, 'promptVersionId', 'prompt version');
    const [row] = await sql<{ body: Record<string, unknown> }[]>`
      select v.body from prompt_version v join prompt p on p.id = v.prompt_id
      where v.id = ${id} and p.organization_id = ${auth(ctx).organizationId} and p.kind = '2025'`;
    if (!row) throw new HttpError(404, `prompt version ${id} not found`);
    bare(ctx, row.body);
  });
}
