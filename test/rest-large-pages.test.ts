/**
 * Pages of logged requests whose bodies are large, on a real PostgreSQL database: a list route that
 * returns bodies (`POST /v1/request/query`, a dataset's `/query` and `/inputs/query`) answers a 413
 * envelope naming `limit` (and the largest limit that fits) when the page's bodies exceed the
 * configured budget (`admin.max-page-body-bytes`, lowered here to 6 MiB), instead of loading every
 * body and failing while Koa serializes the answer (a plain-text 500, nothing logged); a page within
 * the budget answers whole; admin stays up. And the error middleware answers any failure to
 * serialize a body with the 500 envelope and logs it.
 * Run: node --import tsx --test test/rest-large-pages.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Koa from 'koa';
import pino from 'pino';
import { readPageBudgetHint } from '../shared/page-budget-hint.ts';
import { buildConfig } from '../shared/config.ts';
import { createApp } from '../admin/app.ts';
import { errorEnvelope } from '../admin/http.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { assertError, call, type RestEnv } from './rest-support.ts';
import { createTestDatabase } from './support/db.ts';

const MiB = 1024 * 1024;
/** The budget the suite configures: 6 MiB of body text per answer. */
const BUDGET = 6 * MiB;
/** Rows of organization A, each with a ~1 MiB request body and a ~1 MiB response body. */
const ROWS = 20;

let env: RestEnv;
let server: http.Server;
/** Organization A's request ids, newest first. */
const ids: string[] = [];
/** What admin logged at level error (the middleware's "unhandled admin error"). */
const logged: unknown[] = [];

/** Text of `n` characters, different per row (not that it matters to the sizes: they are raw, not compressed). */
const filler = (n: number, seed: number): string => `${seed}:`.padEnd(n, 'abcdefghij');

before(async () => {
  const db = await createTestDatabase();
  const config = buildConfig({ admin: { 'max-page-body-bytes': BUDGET } });
  assert.equal(config.admin.maxPageBodyBytes, BUDGET);
  const logger = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const app = createApp({ sql: db.sql, config, logger, health: () => ({}) });
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
      insert into request_log (id, organization_id, created_at, path, provider, request_model, status, request_body, response_body)
      values (${id}, ${orgA}, ${new Date(base + i * 1000)}, '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200,
        ${JSON.stringify(request)}::text::json, ${JSON.stringify(response)}::text::json)`;
    ids.unshift(id);
  }
});
after(async () => {
  await env?.close();
});

/** The largest limit a 413 names (`limit ≤ K`). */
function fittingLimit(error: string): number {
  const m = /limit ≤ (\d+)/.exec(error);
  assert.ok(m, `the error names the largest limit that fits: ${error}`);
  return Number(m[1]);
}

describe('POST /v1/request/query over large bodies', () => {
  test('a page over the budget is a 413 naming limit and the largest that fits; that limit answers whole', async () => {
    const started = Date.now();
    const big = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 10_000 });
    assertError(big, 413, /^limit: /);
    assert.match(big.body.error, /6 MiB/, 'the error names the budget');
    // What the console reads back from it (admin/console/page-budget.ts, one wording in shared/page-budget-hint.ts).
    assert.deepEqual(readPageBudgetHint(big.body.error), { fewer: 2 });
    assert.ok(Date.now() - started < 10_000, 'answered without reading every body');
    const k = fittingLimit(big.body.error);
    // Each row holds a little over 2 MiB of body text: two fit in 6 MiB, three do not.
    assert.equal(k, 2);

    const fits = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: k });
    assert.equal(fits.status, 200, fits.text.slice(0, 300));
    assert.deepEqual(fits.body.data.map((r: { request_id: string }) => r.request_id), ids.slice(0, k));
    assert.equal(fits.body.data[0].request_body.messages[0].content, filler(MiB, ROWS - 1), 'bodies come back whole');
    assert.equal(fits.body.data[0].response_body.choices[0].message.content, filler(MiB, -(ROWS - 1)));

    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: k + 1 }), 413, /limit ≤ 2/);
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all' }), 413, /^limit: /);
  });

  test('offset pages of the fitting limit cover every row once, in order; sorted and random pages are bounded too', async () => {
    const seen: string[] = [];
    for (let offset = 0; offset < ROWS; offset += 2) {
      const r = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 2, offset });
      assert.equal(r.status, 200, r.text.slice(0, 300));
      seen.push(...r.body.data.map((x: { request_id: string }) => x.request_id));
    }
    assert.deepEqual(seen, ids);
    const asc = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 2, sort: { created_at: 'asc' } });
    assert.deepEqual(asc.body.data.map((x: { request_id: string }) => x.request_id), ids.slice(-2).reverse(), 'the sort order is kept');
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 50, sort: { random: true } }), 413, /^limit: .*limit ≤ 2/);
    const random = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 2, sort: { random: true } });
    assert.equal(random.body.data.length, 2);
  });

  test('keyset pages (before) are bounded the same way', async () => {
    const first = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 2 });
    const last = first.body.data[1];
    const before = { created_at: last.request_created_at, request_id: last.request_id };
    assertError(await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 100, before }), 413, /limit ≤ 2/);
    const next = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 2, before });
    assert.deepEqual(next.body.data.map((x: { request_id: string }) => x.request_id), ids.slice(2, 4));
  });

  test('a request whose bodies alone exceed the budget: the 413 says where to read it alone, and there it reads', async () => {
    const id = randomUUID();
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: filler(7 * MiB, 0) }] };
    await env.db.sql`
      insert into request_log (id, organization_id, created_at, path, provider, status, request_body)
      values (${id}, ${env.orgB}, now(), '/v1/chat/completions', 'openai', 200, ${JSON.stringify(request)}::text::json)`;
    const r = await call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 1 }, env.keyB);
    assertError(r, 413, new RegExp(`^limit: the first request of this page alone holds 7 MiB.*GET /v1/request/${id}`));
    assert.deepEqual(readPageBudgetHint(r.body.error), { alone: id });
    const one = await call(env, 'GET', `/v1/request/${id}`, undefined, env.keyB);
    assert.equal(one.status, 200);
    assert.equal(one.body.data.request_body.messages[0].content.length, 7 * MiB);
  });

  test('three concurrent oversized queries all answer 413 and admin stays up', async () => {
    const replies = await Promise.all([1, 2, 3].map(() => call(env, 'POST', '/v1/request/query', { filter: 'all', limit: 10_000 })));
    for (const r of replies) assertError(r, 413, /^limit: /);
    const health = await fetch(`${env.url}/health`);
    assert.equal(health.status, 200);
    assert.equal((await call(env, 'POST', '/v1/request/count', { filter: 'all' })).body.data, ROWS);
    assert.deepEqual(logged, [], 'a 413 is not an error of admin');
  });
});

describe('a dataset of large requests', () => {
  let datasetId = '';
  before(async () => {
    const r = await call(env, 'POST', '/v1/experiment/dataset', { datasetName: 'large', filter: 'all' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.data.rows, ROWS);
    datasetId = r.body.data.datasetId;
  });

  for (const route of ['query', 'inputs/query']) {
    test(`POST .../{datasetId}/${route}: over the budget a 413 naming limit, within it the rows whole`, async () => {
      const path = `/v1/experiment/dataset/${datasetId}/${route}`;
      const big = await call(env, 'POST', path, { limit: 1000 });
      assertError(big, 413, /^limit: /);
      assert.equal(fittingLimit(big.body.error), 2);
      const fits = await call(env, 'POST', path, { limit: 2, offset: 4 });
      assert.equal(fits.status, 200, fits.text.slice(0, 300));
      const got = fits.body.data.map((x: { request_id?: string; id?: string }) => x.request_id ?? x.id);
      assert.deepEqual(got, ids.slice(4, 6), 'position order');
      const body = fits.body.data[0].request_body;
      const request = typeof body === 'string' ? JSON.parse(body) : body;
      assert.equal(request.messages[0].content, filler(MiB, ROWS - 5));
    });
  }
});

describe('the error middleware', () => {
  test('a body that cannot be serialized answers the 500 envelope (JSON) and is logged', async () => {
    const seen: unknown[] = [];
    const app = new Koa();
    app.silent = true;
    app.use(errorEnvelope({ error: (obj: object) => void seen.push(obj) }));
    app.use((ctx) => {
      if (ctx.path === '/bigint') ctx.body = { data: 1n, error: null };
      else ctx.body = { data: { toJSON: () => { throw new RangeError('Invalid string length'); } }, error: null };
    });
    const s = http.createServer(app.callback());
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    try {
      for (const path of ['/bigint', '/huge']) {
        const res = await fetch(`http://127.0.0.1:${(s.address() as AddressInfo).port}${path}`);
        assert.equal(res.status, 500, path);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        assert.deepEqual(await res.json(), { data: null, error: 'internal error' });
      }
      assert.equal(seen.length, 2, 'each failure is logged');
    } finally {
      s.closeAllConnections();
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });
});
