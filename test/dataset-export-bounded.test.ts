/**
 * The dataset export (admin/resources/datasets/export.ts exportChunks) reads its pages bounded by
 * body bytes, not only by rows: 30 rows of ~2 MiB of bodies with the page's byte bound at 5 MiB come
 * out as chunks (one chunk is one page read) of at most two rows each, never the 60 MiB a page of 200
 * rows held before; a row alone over the bound is still exported, alone; the output, line for line,
 * is the same as with no byte bound. Not timing-based: a chunk is exactly what one page read.
 * Run: node --import tsx --test test/dataset-export-bounded.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createOrganization } from '../admin/organizations.ts';
import { exportChunks } from '../admin/resources/datasets/export.ts';
import { createTestDatabase, type TestDatabase } from './support/db.ts';

const MiB = 1024 * 1024;
const ROWS = 30;
const BOUND = 5 * MiB;

let db: TestDatabase;
let org = '';
let datasetId = '';
const ids: string[] = [];

before(async () => {
  db = await createTestDatabase();
  org = await createOrganization(db.sql, 'export org');
  const [ds] = await db.sql<{ id: string }[]>`insert into dataset (organization_id, name) values (${org}, 'big') returning id`;
  datasetId = ds!.id;
  for (let i = 0; i < ROWS; i++) {
    const id = randomUUID();
    // Row 7 holds 6 MiB alone: more than the bound by itself.
    const half = i === 7 ? 3 * MiB : MiB;
    await db.sql`
      insert into request_log (id, organization_id, created_at, path, provider, request_model, status, request_body, response_body)
      values (${id}, ${org}, now(), '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200,
        json_build_object('model', 'gpt-4o-mini', 'messages', json_build_array(json_build_object('role', 'user', 'content', ${String(i)}::text || repeat('x', ${half}::int)))),
        json_build_object('id', ${'c' + i}::text, 'choices', json_build_array(json_build_object('message', json_build_object('role', 'assistant', 'content', repeat('y', ${half}::int))))))`;
    await db.sql`insert into dataset_row (dataset_id, request_id, organization_id, position) values (${datasetId}, ${id}, ${org}, ${i + 1})`;
    ids.push(id);
  }
});
after(async () => {
  await db?.drop();
});

async function chunks(pageRows?: number, pageBytes?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const c of exportChunks(db.sql, org, datasetId, pageRows, pageBytes)) out.push(c);
  return out;
}

const linesOf = (cs: string[]): string[] => cs.join('').split('\n').filter(Boolean);

describe('dataset export pages bounded by bytes', () => {
  test('30 rows of 2 MiB with a 5 MiB bound: every page two rows at most, the big row alone, same output', async () => {
    const bounded = await chunks(200, BOUND);
    const unbounded = await chunks(200, Number.POSITIVE_INFINITY);
    assert.equal(unbounded.length, 1, 'without a byte bound one page of 200 rows holds all 30');
    assert.equal(bounded.join(''), unbounded.join(''), 'the same bytes');
    assert.deepEqual(linesOf(bounded).map((l) => JSON.parse(l).request_id), ids, 'every row once, in order');
    for (const c of bounded) {
      const rows = linesOf([c]);
      assert.ok(rows.length >= 1);
      if (rows.length > 1) assert.ok(c.length <= BOUND + 64 * 1024, `a page of ${rows.length} rows holds ${c.length} bytes, over the bound`);
      assert.ok(rows.length <= 2, `a page of ${rows.length} rows of 2 MiB each`);
    }
    const big = bounded.find((c) => c.includes(`"request_id":"${ids[7]}"`))!;
    assert.equal(linesOf([big]).length, 1, 'the row over the bound is read alone');
  });

  test('the default bound applies without one given (same output, pages within it)', async () => {
    const byDefault = await chunks();
    assert.equal(byDefault.join(''), (await chunks(200, Number.POSITIVE_INFINITY)).join(''));
    for (const c of byDefault) assert.ok(linesOf([c]).length === 1 || c.length <= 64 * MiB);
  });

  test('the row bound still holds under a large byte bound', async () => {
    const cs = await chunks(4, Number.POSITIVE_INFINITY);
    assert.deepEqual(cs.map((c) => linesOf([c]).length), [4, 4, 4, 4, 4, 4, 4, 2]);
  });
});
