/**
 * `POST /v1/request/query` with `bodies: false` (an extension of the reference API, what the
 * console's Requests list reads): the same rows in the same SvcRequest shape with `request_body`,
 * `response_body`, `llmSchema` and `response_id` null, never refused (413) for the size of bodies
 * it does not carry; without the member (or `bodies: true`) the page keeps its body budget
 * (`admin.max-page-body-bytes`, lowered here to 3 MiB over rows of ~2 MiB of bodies each).
 * Run: node --import tsx --test test/rest-request-list-bodies.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pino from 'pino';
import { buildConfig } from '../shared/config.ts';
import { createApp } from '../admin/app.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { assertDocumented, assertError, assertSchema, call, ownDoc, type RestEnv } from './rest-support.ts';
import { createTestDatabase } from './support/db.ts';

const MiB = 1024 * 1024;
const BUDGET = 3 * MiB;
const ROWS = 8;

let env: RestEnv;
let server: http.Server;
/** Organization A's request ids, newest first. */
const ids: string[] = [];

const filler = (n: number, seed: number): string => `${seed}:`.padEnd(n, 'abcdefghij');

before(async () => {
  const db = await createTestDatabase();
  const config = buildConfig({ admin: { 'max-page-body-bytes': BUDGET } });
  const app = createApp({ sql: db.sql, config, logger: pino({ level: 'silent' }), health: () => ({}) });
  server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const orgA = await createOrganization(db.sql, 'org A');
  const orgB = await createOrganization(db.sql, 'org B');
  env = {
    db,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    orgA,
    orgB,
    keyA: (await createApiKey(db.sql, orgA, 'a')).key,
    keyB: (await createApiKey(db.sql, orgB, 'b')).key,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.drop();
    },
  };
  const base = Date.parse('2025-09-01T00:00:00Z');
  for (let i = 0; i < ROWS; i++) {
    const id = randomUUID();
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: filler(MiB, i) }] };
    const response = { id: `chatcmpl-${i}`, object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: filler(MiB, -i) }, finish_reason: 'stop' }] };
    await db.sql`
      insert into request_log (id, organization_id, created_at, path, provider, request_model, status, request_body, response_body, properties)
      values (${id}, ${orgA}, ${new Date(base + i * 1000)}, '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200,
        ${JSON.stringify(request)}::text::json, ${JSON.stringify(response)}::text::json, ${db.sql.json({ row: String(i) })})`;
    ids.unshift(id);
  }
  await db.sql`insert into request_log (id, organization_id, created_at, path, provider, request_model, status, request_body)
    values (${randomUUID()}, ${orgB}, now(), '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200, '{}'::json)`;
});
after(async () => {
  await env?.close();
});

const query = (body: unknown) => call(env, 'POST', '/v1/request/query', body);
const idsOf = (r: { body: { data: Array<{ request_id: string }> } }) => r.body.data.map((x) => x.request_id);

describe('POST /v1/request/query {bodies: false}', () => {
  test('every row of a page far over the body budget, in the SvcRequest shape, bodies null', async () => {
    assertError(await query({ filter: 'all', limit: 100 }), 413, /limit ≤ 1/);
    const r = await query({ filter: 'all', limit: 100, bodies: false });
    assert.equal(r.status, 200, r.text.slice(0, 300));
    assertDocumented('POST', '/v1/request/query', r, 'ResultSuccess_SvcRequest-Array_');
    assert.deepEqual(idsOf(r), ids, "organization A's rows, newest first");
    for (const rec of r.body.data) {
      assertSchema('SvcRequest', rec);
      assert.equal(rec.request_body, null);
      assert.equal(rec.response_body, null);
      assert.equal(rec.llmSchema, null);
      assert.equal(rec.response_id, null);
    }
  });

  test('the other members are those of the full row', async () => {
    const full = await query({ filter: 'all', limit: 1 });
    assert.equal(full.status, 200, full.text.slice(0, 300));
    const slim = await query({ filter: 'all', limit: 1, bodies: false });
    const { request_body: _a, response_body: _b, llmSchema: _c, response_id: _d, ...fullRest } = full.body.data[0];
    const { request_body: _e, response_body: _f, llmSchema: _g, response_id: _h, ...slimRest } = slim.body.data[0];
    assert.deepEqual(slimRest, fullRest);
    assert.equal(full.body.data[0].request_body.messages[0].content, filler(MiB, ROWS - 1), 'bodies: true (the default) still carries them');
  });

  test('keyset, sort and filters work without bodies; bodies: true keeps the budget', async () => {
    const first = await query({ filter: 'all', limit: 3, bodies: false });
    const last = first.body.data[2];
    const next = await query({ filter: 'all', limit: 3, bodies: false, before: { created_at: last.request_created_at, request_id: last.request_id } });
    assert.deepEqual(idsOf(next), ids.slice(3, 6));
    const asc = await query({ filter: 'all', limit: 2, bodies: false, sort: { created_at: 'asc' } });
    assert.deepEqual(idsOf(asc), ids.slice(-2).reverse());
    const one = await query({ filter: { request_response_rmt: { properties: { row: { equals: '3' } } } }, bodies: false });
    assert.deepEqual(idsOf(one), [ids[ROWS - 1 - 3]]);
    assertError(await query({ filter: 'all', limit: 100, bodies: true }), 413, /limit ≤ 1/);
  });

  test('bodies must be a boolean: a 400 naming it', async () => {
    assertError(await query({ filter: 'all', bodies: 'no' }), 400, /bodies/);
  });

  test('the OpenAPI document describes bodies as an extension', () => {
    const params = (ownDoc as any).components.schemas.RequestQueryParams;
    assert.equal(params.properties.bodies?.type, 'boolean');
    assert.match(params.properties.bodies.description, /Extension/);
  });
});
