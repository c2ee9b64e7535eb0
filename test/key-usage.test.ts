/**
 * admin/key-usage.ts on a fresh PostgreSQL database: marks become `api_key.last_used_at` on the
 * timer, scoped to the organization that marked them; a key written recently is written again only
 * after the minimum interval (its mark waits, it is not lost); close() writes what is left.
 * Run: node --import tsx --test test/key-usage.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startKeyUsage } from '../admin/key-usage.ts';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';
import { waitFor } from './support/stack.ts';

let db: TestDatabase;
let orgA: string;
let orgB: string;
before(async () => {
  db = await createTestDatabase();
  orgA = await createOrganization(db.sql, 'A');
  orgB = await createOrganization(db.sql, 'B');
});
after(async () => {
  await db?.drop();
});

const silent = { warn: () => {} };

async function lastUsed(id: string): Promise<Date | null> {
  const [row] = await db.sql<{ last_used_at: Date | null }[]>`select last_used_at from api_key where id = ${id}`;
  return row!.last_used_at;
}

test('marks are written by the timer, only for keys of the organization that marked them', async () => {
  const a1 = await createApiKey(db.sql, orgA, 'a1');
  const a2 = await createApiKey(db.sql, orgA, 'a2');
  const b1 = await createApiKey(db.sql, orgB, 'b1');
  const usage = startKeyUsage(db.sql, silent, { flushIntervalMs: 20, minIntervalMs: 60_000 });
  try {
    // B reports A's key (a proxy of B cannot know it, but must not be able to touch it), plus junk.
    usage.mark(orgB, [a2.id, 'not-a-uuid', b1.id.toUpperCase()]);
    usage.mark(orgA, [a1.id]);
    assert.equal(await lastUsed(a1.id), null, 'nothing is written on mark');
    await waitFor(async () => (await lastUsed(a1.id)) !== null && (await lastUsed(b1.id)) !== null, 5_000);
    assert.equal(await lastUsed(a2.id), null, "another organization's report does not touch the key");
  } finally {
    await usage.close();
  }
});

test('a key written recently waits for the minimum interval, then is written again; close() writes what is left', async () => {
  const k = await createApiKey(db.sql, orgA, 'throttled');
  const usage = startKeyUsage(db.sql, silent, { flushIntervalMs: 20, minIntervalMs: 1_000 });
  try {
    usage.mark(orgA, [k.id]);
    await waitFor(async () => (await lastUsed(k.id)) !== null, 5_000);
    const first = (await lastUsed(k.id))!;
    usage.mark(orgA, [k.id]);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await lastUsed(k.id), first, 'not written again within the interval');
    await waitFor(async () => (await lastUsed(k.id))!.getTime() > first.getTime(), 5_000);
  } finally {
    await usage.close();
  }
  const usage2 = startKeyUsage(db.sql, silent, { flushIntervalMs: 60_000, minIntervalMs: 60_000 });
  const k2 = await createApiKey(db.sql, orgA, 'at close');
  usage2.mark(orgA, [k2.id]);
  await usage2.close();
  assert.notEqual(await lastUsed(k2.id), null, 'close() writes the marks left');
});

test('a failed write keeps the marks for the next tick', async () => {
  const k = await createApiKey(db.sql, orgA, 'retry');
  await db.sql.unsafe(`create or replace function test_fail() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`);
  await db.sql.unsafe(`create trigger test_fail_api_key before update on api_key for each row execute function test_fail()`);
  const warnings: unknown[] = [];
  const usage = startKeyUsage(db.sql, { warn: (o: unknown) => void warnings.push(o) }, { flushIntervalMs: 20, minIntervalMs: 60_000 });
  try {
    usage.mark(orgA, [k.id]);
    await waitFor(() => warnings.length > 0, 5_000);
    assert.equal(await lastUsed(k.id), null);
    await db.sql.unsafe(`drop trigger test_fail_api_key on api_key`);
    await waitFor(async () => (await lastUsed(k.id)) !== null, 5_000);
    assert.equal(warnings.length, 1, 'one warning per outage');
  } finally {
    await usage.close();
  }
});
