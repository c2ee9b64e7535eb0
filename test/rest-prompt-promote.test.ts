/**
 * REST API: `POST /v1/prompt-2025/promote` (the console's "promote to an environment"): the label
 * moves onto an existing version without making a new one, `production` also moves the prompt's
 * production version, and mistakes are 400/404, another organization's prompt included.
 * Run: node --import tsx --test test/rest-prompt-promote.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { assertDocumented, assertError, call, chatBody, startRest, type RestEnv } from './rest-support.ts';

let env: RestEnv;
before(async () => {
  env = await startRest();
});
after(async () => {
  await env.close();
});

/** A prompt with versions 0.0 (production) and 0.1; returns their ids. */
async function promptWithTwoVersions(): Promise<{ promptId: string; v0: string; v1: string }> {
  const created = await call(env, 'POST', '/v1/prompt-2025', { name: `p-${randomUUID()}`, tags: [], promptBody: chatBody() });
  assert.equal(created.status, 200, created.text);
  const { id: promptId, versionId: v0 } = created.body as { id: string; versionId: string };
  const updated = await call(env, 'POST', '/v1/prompt-2025/update', { promptId, promptVersionId: v0, newMajorVersion: false, commitMessage: 'second', promptBody: chatBody('v') });
  assert.equal(updated.status, 200, updated.text);
  return { promptId, v0, v1: (updated.body as { id: string }).id };
}

async function labelled(promptId: string, environment: string): Promise<string | null> {
  const r = await call(env, 'POST', '/v1/prompt-2025/query/environment-version', { promptId, environment });
  return r.status === 200 ? (r.body as { id: string }).id : null;
}

async function versionCount(promptId: string): Promise<number> {
  return ((await call(env, 'POST', '/v1/prompt-2025/query/versions', { promptId })).body as unknown[]).length;
}

test('promote labels an existing version, moving the label from the version that had it', async () => {
  const { promptId, v0, v1 } = await promptWithTwoVersions();
  const r = await call(env, 'POST', '/v1/prompt-2025/promote', { promptId, promptVersionId: v1, environment: 'staging' });
  assertDocumented('POST', '/v1/prompt-2025/promote', r);
  assert.deepEqual(r.body, { id: v1 });
  assert.equal(await labelled(promptId, 'staging'), v1);
  assert.equal(await versionCount(promptId), 2, 'no new version');

  await call(env, 'POST', '/v1/prompt-2025/promote', { promptId, promptVersionId: v0, environment: 'staging' });
  assert.equal(await labelled(promptId, 'staging'), v0, 'the label moved back');
});

test('promote to production also moves the prompt production version', async () => {
  const { promptId, v1 } = await promptWithTwoVersions();
  const r = await call(env, 'POST', '/v1/prompt-2025/promote', { promptId, promptVersionId: v1, environment: 'production' });
  assert.equal(r.status, 200, r.text);
  assert.equal(await labelled(promptId, 'production'), v1);
  const [p] = await env.db.sql`select production_version_id from prompt where id = ${promptId}`;
  assert.equal(p!.production_version_id, v1);
});

test('promote refuses a version of another prompt, unknown prompts and another organization', async () => {
  const a = await promptWithTwoVersions();
  const b = await promptWithTwoVersions();
  assertError(await call(env, 'POST', '/v1/prompt-2025/promote', { promptId: a.promptId, promptVersionId: b.v1, environment: 'staging' }), 400, /promptVersionId/);
  assertError(await call(env, 'POST', '/v1/prompt-2025/promote', { promptId: a.promptId, promptVersionId: 'nope', environment: 'staging' }), 400, /promptVersionId/);
  assertError(await call(env, 'POST', '/v1/prompt-2025/promote', { promptId: randomUUID(), promptVersionId: a.v1, environment: 'staging' }), 404);
  assertError(await call(env, 'POST', '/v1/prompt-2025/promote', { promptId: a.promptId, promptVersionId: a.v1, environment: 'staging' }, env.keyB), 404);
  assertError(await call(env, 'POST', '/v1/prompt-2025/promote', { promptId: a.promptId, promptVersionId: a.v1 }), 400, /environment/);
  assert.equal(await labelled(a.promptId, 'staging'), null, 'nothing was labelled');
});
