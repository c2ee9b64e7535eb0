/**
 * REST API: legacy prompts (`/v1/prompt/...`) and prompt-2025 (`/v1/prompt-2025...`) over real HTTP
 * on a fresh PostgreSQL database: success shapes against the reference schemas, validation
 * failures, 401, 404, isolation between organizations, transaction rollback, version numbering and
 * concurrent updates.
 * Run: node --import tsx --test test/rest-prompts.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { resolvePromptVersion } from '../admin/prompt-store.ts';
import { assertDocumented, assertError, assertSchema, call, chatBody, ingest, logRecord, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
before(async () => {
  env = await startRest();
});
after(async () => {
  await env?.close();
});

/** Makes every insert/update of `table` fail inside the database until the returned function runs. */
async function failWrites(table: string, on: 'insert' | 'update' | 'delete' = 'insert'): Promise<() => Promise<void>> {
  const sql = env.db.sql;
  await sql.unsafe(`create or replace function test_fail() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`);
  await sql.unsafe(`create trigger test_fail_${table} before ${on} on ${table} for each row execute function test_fail()`);
  return async () => {
    await sql.unsafe(`drop trigger test_fail_${table} on ${table}`);
  };
}

/** True when `s` has no lone surrogate (PostgreSQL stores those as U+FFFD). */
const wellFormed = (s: string) => !/[\uD800-\uDFFF]/.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));

const legacyCreate = (userDefinedId: string, key?: string | null) =>
  call(env, 'POST', '/v1/prompt/create', { userDefinedId, prompt: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi {{name}}' }] }, metadata: { owner: 'qa' } }, key);

async function versionRow(id: string) {
  const [row] = await env.db.sql`select id, prompt_id, major_version, minor_version, metadata from prompt_version where id = ${id}`;
  return row as { id: string; prompt_id: string; major_version: number; minor_version: number; metadata: Record<string, unknown> } | undefined;
}

describe('POST /v1/prompt/create', () => {
  test('creates the prompt and version 1.0 marked production', async () => {
    const r = await legacyCreate('greeting');
    assertDocumented('POST', '/v1/prompt/create', r, 'ResultSuccess_CreatePromptResponse_');
    const v = await versionRow(r.body.data.prompt_version_id);
    assert.equal(v?.prompt_id, r.body.data.id);
    assert.equal(v?.major_version, 1);
    assert.equal(v?.minor_version, 0);
    assert.deepEqual(v?.metadata, { owner: 'qa', isProduction: true });
    const [p] = await env.db.sql`select kind, user_defined_id, production_version_id from prompt where id = ${r.body.data.id}`;
    assert.deepEqual({ ...p }, { kind: 'legacy', user_defined_id: 'greeting', production_version_id: r.body.data.prompt_version_id });
    const resolved = await resolvePromptVersion(env.db.sql, env.orgA, r.body.data.id, null, null);
    assert.ok(!('error' in resolved) && resolved.versionId === r.body.data.prompt_version_id, 'the gateway resolves production to it');
  });

  test('a duplicate userDefinedId in the organization is 409; another organization may use it', async () => {
    assert.equal((await legacyCreate('dup')).status, 200);
    assertError(await legacyCreate('dup'), 409, /already exists/);
    assert.equal((await legacyCreate('dup', env.keyB)).status, 200);
  });

  test('validation failures are 400 naming the field', async () => {
    const base = { userDefinedId: 'x', prompt: { messages: [{ role: 'user', content: 'a' }] }, metadata: {} };
    assertError(await call(env, 'POST', '/v1/prompt/create', { ...base, userDefinedId: 5 }), 400, /userDefinedId/);
    assertError(await call(env, 'POST', '/v1/prompt/create', { ...base, userDefinedId: '' }), 400, /userDefinedId/);
    assertError(await call(env, 'POST', '/v1/prompt/create', { prompt: base.prompt, metadata: {} }), 400, /userDefinedId: required/);
    assertError(await call(env, 'POST', '/v1/prompt/create', { ...base, prompt: 'text' }), 400, /prompt/);
    assertError(await call(env, 'POST', '/v1/prompt/create', { ...base, prompt: { messages: [{ content: 'no role' }] } }), 400, /prompt\.messages\.0\.role/);
    assertError(await call(env, 'POST', '/v1/prompt/create', { ...base, metadata: [] }), 400, /metadata/);
    assertError(await call(env, 'POST', '/v1/prompt/create', { ...base, metadata: { a: 'x\u0000y' } }), 400, /metadata\.a: must not contain/);
    assertError(await call(env, 'POST', '/v1/prompt/create', '{"userDefinedId": '), 400, /malformed JSON/);
  });

  test('a body nested 200,000 deep inside metadata (400 KB) is a 400 naming the member and the limit', async () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const body = `{"userDefinedId":"deep","prompt":{"messages":[{"role":"user","content":"a"}]},"metadata":{"x":${deep}}}`;
    const r = await call(env, 'POST', '/v1/prompt/create', body);
    assertError(r, 400);
    assert.equal(r.body.error, 'invalid body: metadata: nested deeper than 128 levels of arrays and objects');
    // With a U+0000 deep down too, the depth is what is reported (the NUL check never walks it).
    const withNul = `{"userDefinedId":"deep","prompt":{"messages":[{"role":"user","content":"a"}]},"metadata":{"x":${'['.repeat(150_000)}"\\u0000"${']'.repeat(150_000)}}}`;
    assertError(await call(env, 'POST', '/v1/prompt/create', withNul), 400, /metadata: nested deeper than 128 levels/);
    // 128 levels in all are accepted and stored as sent.
    const atLimit = JSON.parse(`{"userDefinedId":"deep-ok","prompt":{"messages":[{"role":"user","content":"a"}]},"metadata":{"x":${'['.repeat(126)}${']'.repeat(126)}}}`);
    const ok = await call(env, 'POST', '/v1/prompt/create', atLimit);
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    assert.deepEqual((await versionRow(ok.body.data.prompt_version_id))?.metadata.x, atLimit.metadata.x);
    assert.equal((await legacyCreate('after-deep')).status, 200, 'admin still answers');
  });

  test('401 without, with a malformed, an unknown or a revoked key', async () => {
    assertError(await legacyCreate('k1', null), 401);
    assertError(await call(env, 'POST', '/v1/prompt/create', {}, 'sk-svc-unknown'), 401);
    const res = await fetch(`${env.url}/v1/prompt/create`, { method: 'POST', headers: { authorization: 'Basic abc' }, body: '{}' });
    assert.equal(res.status, 401);
    const created = await call(env, 'POST', '/v1/api-keys', { name: 'short-lived' });
    assert.equal((await legacyCreate('k2', created.body.data.key)).status, 200);
    assert.equal((await call(env, 'DELETE', `/v1/api-keys/${created.body.data.id}`)).status, 200);
    assertError(await legacyCreate('k3', created.body.data.key), 401);
  });

  test('a failing step leaves nothing behind', async () => {
    const restore = await failWrites('prompt_environment');
    try {
      const r = await legacyCreate('rolled-back');
      assert.equal(r.status, 500);
    } finally {
      await restore();
    }
    const rows = await env.db.sql`select id from prompt where user_defined_id = 'rolled-back'`;
    assert.equal(rows.length, 0);
    assert.equal((await legacyCreate('rolled-back')).status, 200, 'the id is free afterwards');
  });
});

describe('POST /v1/prompt/version/{id}/promote', () => {
  async function legacyWithTwoVersions(name: string) {
    const created = await legacyCreate(name);
    const promptId = created.body.data.id as string;
    const v1 = created.body.data.prompt_version_id as string;
    const [v2] = await env.db.sql<{ id: string }[]>`
      insert into prompt_version (organization_id, prompt_id, major_version, minor_version, model, body, metadata)
      values (${env.orgA}, ${promptId}, 2, 0, 'gpt-4o', ${env.db.sql.json({ messages: [{ role: 'user', content: 'v2' }] })}, '{}') returning id`;
    return { promptId, v1, v2: v2!.id };
  }

  test('moves the production mark and returns the version record', async () => {
    const { promptId, v1, v2 } = await legacyWithTwoVersions('promo');
    const r = await call(env, 'POST', `/v1/prompt/version/${v2}/promote`, { previousProductionVersionId: v1 });
    assertDocumented('POST', '/v1/prompt/version/{promptVersionId}/promote', r, 'ResultSuccess_PromptVersionResult_');
    const data = r.body.data;
    assert.equal(data.id, v2);
    assert.equal(data.prompt_v2, promptId);
    assert.equal(data.major_version, 2);
    assert.equal(data.model, 'gpt-4o');
    assert.deepEqual(JSON.parse(data.svc_template), { messages: [{ role: 'user', content: 'v2' }] });
    assert.equal(data.metadata.isProduction, true);
    assert.equal((await versionRow(v1))?.metadata.isProduction, false);
    const [p] = await env.db.sql`select production_version_id from prompt where id = ${promptId}`;
    assert.equal(p!.production_version_id, v2);
    const resolved = await resolvePromptVersion(env.db.sql, env.orgA, promptId, null, 'production');
    assert.ok(!('error' in resolved) && resolved.versionId === v2);
  });

  test('a previous version of another prompt is 400; unknown ids are 404; validation 400', async () => {
    const a = await legacyWithTwoVersions('promo-a');
    const b = await legacyWithTwoVersions('promo-b');
    assertError(await call(env, 'POST', `/v1/prompt/version/${a.v2}/promote`, { previousProductionVersionId: b.v1 }), 400, /previousProductionVersionId/);
    assertError(await call(env, 'POST', `/v1/prompt/version/${a.v2}/promote`, { previousProductionVersionId: 'nope' }), 400, /previousProductionVersionId/);
    assertError(await call(env, 'POST', `/v1/prompt/version/${a.v2}/promote`, {}), 400, /previousProductionVersionId: required/);
    assertError(await call(env, 'POST', `/v1/prompt/version/${a.v2}/promote`, { previousProductionVersionId: 7 }), 400, /previousProductionVersionId/);
    assertError(await call(env, 'POST', `/v1/prompt/version/${randomUUID()}/promote`, { previousProductionVersionId: a.v1 }), 404);
    assertError(await call(env, 'POST', `/v1/prompt/version/not-a-uuid/promote`, { previousProductionVersionId: a.v1 }), 404);
    assert.equal((await versionRow(a.v1))?.metadata.isProduction, true, 'nothing changed');
  });

  test("another organization's version answers as unknown", async () => {
    const { v1, v2 } = await legacyWithTwoVersions('promo-iso');
    assertError(await call(env, 'POST', `/v1/prompt/version/${v2}/promote`, { previousProductionVersionId: v1 }, env.keyB), 404);
    assert.equal((await versionRow(v1))?.metadata.isProduction, true);
  });

  test('a failing step rolls the whole promotion back', async () => {
    const { promptId, v1, v2 } = await legacyWithTwoVersions('promo-rollback');
    const restore = await failWrites('prompt', 'update');
    try {
      assert.equal((await call(env, 'POST', `/v1/prompt/version/${v2}/promote`, { previousProductionVersionId: v1 })).status, 500);
    } finally {
      await restore();
    }
    assert.equal((await versionRow(v1))?.metadata.isProduction, true);
    assert.equal((await versionRow(v2))?.metadata.isProduction, undefined);
    const [p] = await env.db.sql`select production_version_id from prompt where id = ${promptId}`;
    assert.equal(p!.production_version_id, v1);
  });
});

async function create2025(name = 'support', tags = ['a', 'b'], key?: string | null) {
  const r = await call(env, 'POST', '/v1/prompt-2025', { name, tags, promptBody: chatBody() }, key);
  assert.equal(r.status, 200, r.text);
  return r.body as { id: string; versionId: string };
}

const update = (promptId: string, promptVersionId: string, newMajorVersion: boolean, extra: Record<string, unknown> = {}, key?: string | null) =>
  call(env, 'POST', '/v1/prompt-2025/update', { promptId, promptVersionId, newMajorVersion, commitMessage: 'change', promptBody: chatBody('v'), ...extra }, key);

describe('prompt-2025', () => {
  test('POST /v1/prompt-2025 creates version 0.0 labelled production (bare response)', async () => {
    const r = await call(env, 'POST', '/v1/prompt-2025', { name: 'Support bot', tags: ['support', 'en'], promptBody: chatBody() });
    assertDocumented('POST', '/v1/prompt-2025', r);
    assertSchema('PromptCreateResponse', r.body);
    const v = await versionRow(r.body.versionId);
    assert.equal(v?.prompt_id, r.body.id);
    assert.deepEqual([v?.major_version, v?.minor_version], [0, 0]);
    const resolved = await resolvePromptVersion(env.db.sql, env.orgA, r.body.id, null, 'production');
    assert.ok(!('error' in resolved) && resolved.versionId === r.body.versionId && resolved.version === '0.0');
  });

  test('GET /v1/prompt-2025/id/{id}', async () => {
    const { id } = await create2025('getter', ['x']);
    const r = await call(env, 'GET', `/v1/prompt-2025/id/${id}`);
    assertDocumented('GET', '/v1/prompt-2025/id/{promptId}', r);
    assertSchema('Prompt2025', r.body);
    assert.equal(r.body.id, id);
    assert.equal(r.body.name, 'getter');
    assert.deepEqual(r.body.tags, ['x']);
    assertError(await call(env, 'GET', `/v1/prompt-2025/id/${randomUUID()}`), 404);
    assertError(await call(env, 'GET', `/v1/prompt-2025/id/zzz`), 404);
    assertError(await call(env, 'GET', `/v1/prompt-2025/id/${id}`, undefined, env.keyB), 404);
    assertError(await call(env, 'GET', `/v1/prompt-2025/id/${id}`, undefined, null), 401);
    const legacy = await legacyCreate('legacy-not-2025');
    assertError(await call(env, 'GET', `/v1/prompt-2025/id/${legacy.body.data.id}`), 404);
  });

  test('version numbering: 0.0 → minor 0.1 → major 1.0 → minor 1.1; minor from an old major', async () => {
    const { id, versionId: v00 } = await create2025('numbering');
    const r01 = await update(id, v00, false);
    assertDocumented('POST', '/v1/prompt-2025/update', r01);
    const v01 = r01.body.id as string;
    const v10 = (await update(id, v01, true)).body.id as string;
    const v11 = (await update(id, v10, false)).body.id as string;
    const v02 = (await update(id, v00, false)).body.id as string;
    const v20 = (await update(id, v00, true)).body.id as string;
    const nums = async (vid: string) => {
      const v = await versionRow(vid);
      return `${v?.major_version}.${v?.minor_version}`;
    };
    assert.deepEqual(await Promise.all([v01, v10, v11, v02, v20].map(nums)), ['0.1', '1.0', '1.1', '0.2', '2.0']);
    const [parent] = await env.db.sql`select parent_prompt_version, commit_message from prompt_version where id = ${v11}`;
    assert.equal(parent!.parent_prompt_version, v10);
    assert.equal(parent!.commit_message, 'change');
  });

  test('10 concurrent minor updates yield 10 distinct minors', async () => {
    const { id, versionId } = await create2025('parallel');
    const replies = await Promise.all(Array.from({ length: 10 }, () => update(id, versionId, false)));
    for (const r of replies) assert.equal(r.status, 200, r.text);
    const rows = await env.db.sql<{ minor_version: number }[]>`
      select minor_version from prompt_version where prompt_id = ${id} and major_version = 0 and minor_version > 0 order by minor_version`;
    assert.deepEqual(rows.map((r) => r.minor_version), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const majors = await Promise.all(Array.from({ length: 5 }, () => update(id, versionId, true)));
    const got = await env.db.sql<{ major_version: number }[]>`
      select major_version from prompt_version where id in ${env.db.sql(majors.map((r) => r.body.id as string))} order by major_version`;
    assert.deepEqual(got.map((r) => r.major_version), [1, 2, 3, 4, 5]);
  });

  test('environment labels move to the new version; production also sets the production version', async () => {
    const { id, versionId: v00 } = await create2025('envs');
    const v01 = (await update(id, v00, false, { environment: 'staging' })).body.id as string;
    const v02 = (await update(id, v01, false, { environment: 'production' })).body.id as string;
    const v03 = (await update(id, v02, false, { environment: 'staging' })).body.id as string;
    const envs = async (e: string) => {
      const r = await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId: id, environment: e });
      assertDocumented('POST', '/v1/prompt-2025/query/environment-version', r);
      assertSchema('Prompt2025Version', r.body);
      return r.body;
    };
    assert.equal((await envs('staging')).id, v03);
    const prod = await envs('production');
    assert.equal(prod.id, v02);
    assert.deepEqual(prod.environments, ['production']);
    const [p] = await env.db.sql`select production_version_id from prompt where id = ${id}`;
    assert.equal(p!.production_version_id, v02);
    // a version may hold several labels
    const v04 = (await update(id, v03, false, { environment: 'production' })).body.id as string;
    await update(id, v03, false, {});
    const list = await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id });
    const v3 = list.body.find((v: { id: string }) => v.id === v03);
    assert.deepEqual(v3.environments, ['staging']);
    assert.deepEqual(list.body.find((v: { id: string }) => v.id === v04).environments, ['production']);
    await env.db.sql`insert into prompt_environment (prompt_id, environment, version_id) values (${id}, 'dev', ${v04})`;
    assert.deepEqual((await envs('dev')).environments, ['dev', 'production']);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId: id, environment: 'nope' }), 404, /environment/);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId: id, environment: 'production' }, env.keyB), 404);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId: id }), 400, /environment: required/);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId: id, environment: 'production' }, null), 401);
  });

  test('update validation: base version of another prompt 400, unknown prompt 404, fields 400', async () => {
    const a = await create2025('upd-a');
    const b = await create2025('upd-b');
    assertError(await update(a.id, b.versionId, false), 400, /promptVersionId/);
    assertError(await update(a.id, 'not-a-uuid', false), 400, /promptVersionId/);
    assertError(await update(randomUUID(), a.versionId, false), 404);
    assertError(await update(a.id, a.versionId, false, {}, env.keyB), 404);
    assertError(await update(a.id, a.versionId, false, {}, null), 401);
    assertError(await update(a.id, a.versionId, 'yes' as never), 400, /newMajorVersion/);
    assertError(await update(a.id, a.versionId, false, { commitMessage: undefined }), 400, /commitMessage: required/);
    assertError(await update(a.id, a.versionId, false, { environment: '' }), 400, /environment/);
    assertError(await update(a.id, a.versionId, false, { promptBody: { ...chatBody(), bogus: 1 } }), 400, /promptBody\.bogus: unknown key/);
    assertError(await update(a.id, a.versionId, false, { promptBody: { messages: [{ role: 'user' }] } }), 400, /promptBody\.messages\.0\.content/);
    assertError(await update(a.id, a.versionId, false, { promptBody: { temperature: 'hot' } }), 400, /promptBody\.temperature/);
    const count = await env.db.sql`select id from prompt_version where prompt_id = ${a.id}`;
    assert.equal(count.length, 1, 'no version was created');
  });

  test('a failing update step leaves no version behind', async () => {
    const { id, versionId } = await create2025('upd-rollback');
    const restore = await failWrites('prompt_environment');
    try {
      assert.equal((await update(id, versionId, false, { environment: 'staging' })).status, 500);
    } finally {
      await restore();
    }
    const rows = await env.db.sql`select id from prompt_version where prompt_id = ${id}`;
    assert.equal(rows.length, 1);
    assert.equal((await update(id, versionId, false, { environment: 'staging' })).status, 200);
  });

  test('create validation and rollback', async () => {
    assertError(await call(env, 'POST', '/v1/prompt-2025', { name: 'x', tags: 'a', promptBody: chatBody() }), 400, /tags/);
    assertError(await call(env, 'POST', '/v1/prompt-2025', { name: 'x', tags: [1], promptBody: chatBody() }), 400, /tags\.0/);
    assertError(await call(env, 'POST', '/v1/prompt-2025', { tags: [], promptBody: chatBody() }), 400, /name: required/);
    assertError(await call(env, 'POST', '/v1/prompt-2025', { name: 'x', tags: [] }), 400, /promptBody: required/);
    assertError(await call(env, 'POST', '/v1/prompt-2025', { name: 'x', tags: [], promptBody: { ...chatBody(), extra: true } }), 400, /promptBody\.extra: unknown key/);
    assertError(await call(env, 'POST', '/v1/prompt-2025', { name: 'x', tags: [], promptBody: chatBody() }, null), 401);
    const restore = await failWrites('prompt_environment');
    try {
      assert.equal((await call(env, 'POST', '/v1/prompt-2025', { name: 'never-stored', tags: [], promptBody: chatBody() })).status, 500);
    } finally {
      await restore();
    }
    assert.equal((await env.db.sql`select id from prompt where name = 'never-stored'`).length, 0);
  });

  test('POST /v1/prompt-2025/query lists by name or tag, paged, scoped to the organization', async () => {
    await create2025('Alpha Finder', ['search', 'alpha']);
    await create2025('Beta Finder', ['search', 'beta']);
    await create2025('Gamma_100%', ['gamma']);
    await create2025('Alpha Finder B', ['alpha'], env.keyB);
    const q = (body: unknown, key?: string | null) => call(env, 'POST', '/v1/prompt-2025/query', body, key);
    const all = await q({});
    assertDocumented('POST', '/v1/prompt-2025/query', all);
    for (const p of all.body) assertSchema('Prompt2025', p);
    assert.ok(all.body.length >= 3);
    assert.ok(!all.body.some((p: { name: string }) => p.name === 'Alpha Finder B'), 'org B is not listed');
    assert.deepEqual((await q({ search: 'finder' })).body.map((p: { name: string }) => p.name).sort(), ['Alpha Finder', 'Beta Finder']);
    assert.deepEqual((await q({ search: 'beta' })).body.map((p: { name: string }) => p.name), ['Beta Finder'], 'search matches tags too');
    assert.deepEqual((await q({ tagsFilter: ['search', 'alpha'] })).body.map((p: { name: string }) => p.name), ['Alpha Finder']);
    assert.deepEqual((await q({ search: '_100%' })).body.map((p: { name: string }) => p.name), ['Gamma_100%']);
    assert.deepEqual((await q({ search: "%' or 1=1 --" })).body, []);
    const page0 = (await q({ search: 'finder', page: 0, pageSize: 1 })).body;
    const page1 = (await q({ search: 'finder', page: 1, pageSize: 1 })).body;
    assert.equal(page0.length, 1);
    assert.equal(page1.length, 1);
    assert.notEqual(page0[0].id, page1[0].id);
    assert.deepEqual((await q({ search: 'Alpha Finder B' }, env.keyB)).body.map((p: { name: string }) => p.name), ['Alpha Finder B']);
    assertError(await q({ pageSize: 0 }), 400, /pageSize/);
    assertError(await q({ page: -1 }), 400, /page/);
    assertError(await q({ tagsFilter: 'x' }), 400, /tagsFilter/);
    assertError(await q({ search: 3 }), 400, /search/);
    assertError(await q({}, null), 401);
  });

  test('POST /v1/prompt-2025/query/versions', async () => {
    const { id, versionId } = await create2025('versions');
    const v01 = (await update(id, versionId, false)).body.id;
    const v10 = (await update(id, v01, true)).body.id;
    const r = await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id });
    assertDocumented('POST', '/v1/prompt-2025/query/versions', r);
    for (const v of r.body) assertSchema('Prompt2025Version', v);
    assert.deepEqual(r.body.map((v: { major_version: number; minor_version: number }) => `${v.major_version}.${v.minor_version}`), ['1.0', '0.1', '0.0']);
    assert.equal(r.body[0].id, v10);
    assert.equal(r.body[0].model, 'gpt-4o-mini');
    assert.equal(r.body[2].commit_message, 'Initial version');
    assert.deepEqual(r.body[2].environments, ['production']);
    const major0 = await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id, majorVersion: 0 });
    assert.deepEqual(major0.body.map((v: { minor_version: number }) => v.minor_version), [1, 0]);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id }, env.keyB), 404);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: randomUUID() }), 404);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: 'junk' }), 404);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', {}), 400, /promptId: required/);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id }, null), 401);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id, majorVersion: 'one' }), 400, /majorVersion/);
    assertError(await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId: id, majorVersion: 1e20 }), 400, /majorVersion/);
  });

  test('GET /v1/prompt-2025/{versionId}/prompt-body', async () => {
    const { versionId } = await create2025('body');
    const r = await call(env, 'GET', `/v1/prompt-2025/${versionId}/prompt-body`);
    assertDocumented('GET', '/v1/prompt-2025/{promptVersionId}/prompt-body', r);
    assertSchema('Prompt2025VersionPromptBody', r.body);
    assert.deepEqual(r.body, chatBody());
    assertError(await call(env, 'GET', `/v1/prompt-2025/${versionId}/prompt-body`, undefined, env.keyB), 404);
    assertError(await call(env, 'GET', `/v1/prompt-2025/${randomUUID()}/prompt-body`), 404);
    assertError(await call(env, 'GET', `/v1/prompt-2025/${versionId}/prompt-body`, undefined, null), 401);
  });

  test('DELETE /v1/prompt-2025/{id} deletes the prompt, its versions and input records', async () => {
    const { id, versionId } = await create2025('to-delete');
    await update(id, versionId, false, { environment: 'staging' });
    const [requestId] = await ingest(env, env.orgA, [
      logRecord(env.orgA, { prompt: { promptId: id, versionId, version: '0.0', environment: 'production', inputs: { name: 'Ada' } } }),
    ]);
    assertError(await call(env, 'DELETE', `/v1/prompt-2025/${id}`, undefined, env.keyB), 404);
    const r = await call(env, 'DELETE', `/v1/prompt-2025/${id}`);
    assert.equal(r.status, 200);
    assert.equal(r.text, 'null');
    assertDocumented('DELETE', '/v1/prompt-2025/{promptId}', r);
    assert.equal((await env.db.sql`select id from prompt where id = ${id}`).length, 0);
    assert.equal((await env.db.sql`select id from prompt_version where prompt_id = ${id}`).length, 0);
    assert.equal((await env.db.sql`select 1 from prompt_environment where prompt_id = ${id}`).length, 0);
    const [log] = await env.db.sql`select prompt_inputs from request_log where id = ${requestId!}`;
    assert.equal(log!.prompt_inputs, null, 'input records are gone; the request log stays');
    assertError(await call(env, 'DELETE', `/v1/prompt-2025/${id}`), 404);
    assertError(await call(env, 'DELETE', `/v1/prompt-2025/not-a-uuid`), 404);
    assertError(await call(env, 'DELETE', `/v1/prompt-2025/${randomUUID()}`, undefined, null), 401);
  });

  test('a failing delete step keeps the prompt, its versions and inputs', async () => {
    const { id, versionId } = await create2025('delete-rollback');
    const [requestId] = await ingest(env, env.orgA, [logRecord(env.orgA, { prompt: { promptId: id, versionId, version: '0.0', environment: null, inputs: { a: 1 } } })]);
    const restore = await failWrites('prompt_version', 'delete');
    try {
      assert.equal((await call(env, 'DELETE', `/v1/prompt-2025/${id}`)).status, 500);
    } finally {
      await restore();
    }
    assert.equal((await call(env, 'GET', `/v1/prompt-2025/id/${id}`)).status, 200);
    assert.equal((await env.db.sql`select id from prompt_version where prompt_id = ${id}`).length, 1);
    const [log] = await env.db.sql`select prompt_inputs from request_log where id = ${requestId!}`;
    assert.deepEqual(log!.prompt_inputs, { a: 1 });
  });

  test('every change notifies proxies on svc_prompts', async () => {
    const seen: string[] = [];
    const listener = await env.db.sql.listen('svc_prompts', (payload) => seen.push(payload));
    try {
      const { id, versionId } = await create2025('notified');
      await update(id, versionId, false, { environment: 'staging' });
      await call(env, 'DELETE', `/v1/prompt-2025/${id}`);
      for (let i = 0; i < 50 && seen.filter((s) => s.includes(id)).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      assert.equal(seen.filter((s) => JSON.parse(s).promptId === id && JSON.parse(s).organizationId === env.orgA).length, 3);
    } finally {
      await listener.unlisten();
    }
  });

  test('arbitrary strings in names, tags, environments and bodies give 200 (stored exactly) or 400, never 500', async () => {
    const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), fc.constantFrom('NULL', 'a,b', '{x}', '"q"', 'back\\slash', "it's", '', ' '));
    await fc.assert(
      fc.asyncProperty(text, fc.array(text, { maxLength: 4 }), text, text, async (name, tags, content, environment) => {
        const r = await call(env, 'POST', '/v1/prompt-2025', { name, tags, promptBody: { model: content, messages: [{ role: 'user', content }] } });
        assert.ok(r.status === 200 || r.status === 400, `${r.status} ${r.text.slice(0, 200)}`);
        if (r.status !== 200) return;
        const got = await call(env, 'GET', `/v1/prompt-2025/id/${r.body.id}`);
        if (wellFormed(name)) assert.equal(got.body.name, name);
        if (tags.every(wellFormed)) assert.deepEqual(got.body.tags, tags);
        const listed = await call(env, 'POST', '/v1/prompt-2025/query', { search: name, tagsFilter: tags });
        assert.equal(listed.status, 200, listed.text);
        if (wellFormed(name) && tags.every(wellFormed)) assert.ok(listed.body.some((p: { id: string }) => p.id === r.body.id));
        const u = await update(r.body.id, r.body.versionId, false, { environment, commitMessage: content, promptBody: { messages: [{ role: 'user', content }] } });
        assert.ok(u.status === 200 || u.status === 400, `${u.status} ${u.text.slice(0, 200)}`);
        if (u.status === 200 && environment.length > 0) {
          const e = await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId: r.body.id, environment });
          assert.equal(e.status, wellFormed(environment) ? 200 : e.status);
        }
        const l = await call(env, 'POST', '/v1/prompt/create', { userDefinedId: name, prompt: { messages: [{ role: 'user', content }] }, metadata: { [content]: name } });
        assert.ok([200, 400, 409].includes(l.status), `${l.status} ${l.text.slice(0, 200)}`);
      }),
      { numRuns: 150 },
    );
  });
});
