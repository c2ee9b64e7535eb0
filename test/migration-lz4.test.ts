/**
 * Migration 00010 (admin/migrations/00010_request_log_bodies_lz4): on a server built with lz4, the
 * log's bodies and prompt text are compressed with lz4 from then on; running it again changes
 * nothing. (A server without lz4, such as the embedded one, keeps pglz: test/start.test.ts
 * migrates one.)
 * Run: node --import tsx --test test/migration-lz4.test.ts
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { migrate } from '../admin/db.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';

const CLAUDE_CODE_REQUEST = readFileSync(new URL('./fixtures/clients/claude-code-2.1.328.request.json', import.meta.url), 'utf8');

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

/** The compression method set on each of request_log's columns that has one. */
async function columnCompression(): Promise<Record<string, string>> {
  const rows = await db.sql<Array<{ name: string; method: string }>>`
    select attname as name, attcompression as method from pg_attribute
    where attrelid = 'request_log'::regclass and attnum > 0 and not attisdropped and attcompression <> ''`;
  return Object.fromEntries(rows.map((r) => [r.name, r.method]));
}

test('the bodies and prompt text are compressed with lz4 where the server has it, and only those; a second run changes nothing', async () => {
  const [{ lz4 }] = await db.sql<[{ lz4: boolean }]>`
    select 'lz4' = any(enumvals) as lz4 from pg_settings where name = 'default_toast_compression'`;
  // The CI machine's PostgreSQL (Debian's) is built with lz4: without it this test would prove nothing.
  assert.equal(lz4, true, 'the test server offers lz4');
  assert.deepEqual(await columnCompression(), { request_body: 'l', response_body: 'l', prompt_text: 'l' });
  await db.sql`delete from migrations where migration_id >= 10`;
  await migrate(db.sql);
  assert.deepEqual(await columnCompression(), { request_body: 'l', response_body: 'l', prompt_text: 'l' });

  const org = await createOrganization(db.sql, 'lz4');
  const [row] = await db.sql<[{ id: string }]>`
    insert into request_log (id, organization_id, created_at, path, provider, status, request_body)
    values (gen_random_uuid(), ${org}, now(), '/v1/messages', 'anthropic', 200, ${CLAUDE_CODE_REQUEST}::text::json) returning id`;
  const [stored] = await db.sql<[{ method: string; text: string }]>`
    select pg_column_compression(request_body) as method, request_body::text as text from request_log where id = ${row.id}`;
  assert.equal(stored.method, 'lz4');
  assert.ok(stored.text === CLAUDE_CODE_REQUEST, 'the body reads back as it was stored');
});
