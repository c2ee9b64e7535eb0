/** Retention: request data older than retention-days is deleted, with its scores and dataset rows. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createOrganization } from '../admin/organizations.ts';
import { deleteExpiredRequests } from '../admin/retention.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

test('old requests go, with their scores and dataset rows; recent ones stay', async () => {
  const { sql } = db;
  const org = await createOrganization(sql, 'retention');
  const now = new Date('2026-06-01T00:00:00Z');
  const day = 86_400_000;
  const old = Array.from({ length: 12_000 }, () => randomUUID());
  const recent = randomUUID();
  const rows = [...old.map((id) => ({ id, at: new Date(now.getTime() - 91 * day) })), { id: recent, at: new Date(now.getTime() - 89 * day) }];
  for (let i = 0; i < rows.length; i += 2000) {
    const chunk = rows.slice(i, i + 2000).map((r) => ({ id: r.id, organization_id: org, created_at: r.at, path: '/ai/chat/completions', provider: 'openai', status: 200 }));
    await sql`insert into request_log ${sql(chunk as never)}`;
  }
  await sql`insert into request_score (request_id, organization_id, name, value) values (${old[0]!}, ${org}, 'q', 1), (${recent}, ${org}, 'q', 1)`;
  const [ds] = await sql<{ id: string }[]>`insert into dataset (organization_id, name) values (${org}, 'd') returning id`;
  await sql`insert into dataset_row (dataset_id, request_id, organization_id, position) values (${ds!.id}, ${old[1]!}, ${org}, 0), (${ds!.id}, ${recent}, ${org}, 1)`;

  const deleted = await deleteExpiredRequests(sql, 90, now);
  assert.equal(deleted, 12_000, 'deleted in several bounded batches');
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from request_log`;
  assert.equal(n, 1);
  const scores = await sql`select request_id from request_score`;
  assert.deepEqual(scores.map((r) => r.request_id), [recent]);
  const dsRows = await sql`select request_id from dataset_row`;
  assert.deepEqual(dsRows.map((r) => r.request_id), [recent]);
});
