/**
 * Migration 00003 (admin/migrations/00003_request_model_without_provider): rows stored before it
 * hold `request_model` as the client wrote it; after it, as records show it and filters match it,
 * without a known provider's prefix, exactly like rows ingested now (admin/ingest.ts).
 * Run: node --import tsx --test test/migration-request-model.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { migrate } from '../admin/db.ts';
import { modelWithoutProvider } from '../admin/ingest.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

test('strips a known provider prefix from the request_model of older rows, once, like ingestion now does', async () => {
  const sql = db.sql;
  const org = await createOrganization(sql, 'migrated');
  const stored: Array<string | null> = [
    'openai/gpt-4o-mini',
    'anthropic/claude-sonnet-4-5',
    'openrouter/openai/gpt-4o',
    'meta-llama/Llama-3-70b',
    'gpt-4o-mini',
    '/leading-slash',
    'openai',
    'azure/gpt-4o',
    null,
  ];
  const ids = new Map<string, string | null>();
  for (const model of stored) {
    const id = randomUUID();
    ids.set(id, model);
    await sql`insert into request_log (id, organization_id, created_at, path, provider, status, request_model)
              values (${id}, ${org}, now(), '/ai/chat/completions', 'openai', 200, ${model})`;
  }
  // Run 00003 again over these rows as if they had been stored before it (postgres-shift runs the
  // migrations after the highest one recorded, so the later ones run again too: they are idempotent).
  await sql`delete from migrations where migration_id >= 3`;
  await migrate(sql);
  const rows = await sql<{ id: string; request_model: string | null }[]>`select id, request_model from request_log where organization_id = ${org}`;
  const migrated: Record<string, string | null> = Object.fromEntries(rows.map((r) => [String(ids.get(r.id)), r.request_model]));
  assert.deepEqual({ ...migrated }, {
    'openai/gpt-4o-mini': 'gpt-4o-mini',
    'anthropic/claude-sonnet-4-5': 'claude-sonnet-4-5',
    'openrouter/openai/gpt-4o': 'openai/gpt-4o',
    'meta-llama/Llama-3-70b': 'meta-llama/Llama-3-70b',
    'gpt-4o-mini': 'gpt-4o-mini',
    '/leading-slash': '/leading-slash',
    openai: 'openai',
    'azure/gpt-4o': 'gpt-4o',
    null: null,
  });
  for (const model of stored) assert.equal(migrated[String(model)], modelWithoutProvider(model), `the migration and ingestion agree on ${model}`);
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from migrations where migration_id = 3`;
  assert.equal(n, 1, 'recorded as applied');
});
