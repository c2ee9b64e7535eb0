/**
 * The console's reading of lists bounded by body bytes (admin/console/page-budget.ts), without a
 * browser: a 413 naming `limit ≤ K` is read again in reads of K (kept for the next pages), a 413
 * naming one request over the budget alone gives a stand-in and the reads go on past it, the page
 * comes back whole (short only at the list's end), other failures are thrown.
 * Run: node --import tsx --test test/console-page-budget.test.ts
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../admin/console/api.ts';
import { pageBudgetHint, readWithinBudget } from '../admin/console/page-budget.ts';

const ID = '0b6f3c1e-7a52-4d0e-9c3b-2f1d8e4a5b6c';
const fewer = (k: number) => new ApiError(413, `limit: the first ${k + 1} rows of this page already hold 1.1 MiB of bodies, more than the 1.0 MiB of bodies one answer may carry (admin.max-page-body-bytes); ask for fewer (limit ≤ ${k})`);
const alone = new ApiError(413, `limit: the first row of this page alone holds 1.2 MiB of bodies, more than the 1.0 MiB of bodies one answer may carry (admin.max-page-body-bytes); read it alone with GET /v1/request/${ID}, or page past it`);

/** A list of `n` rows (their offsets) whose reads over `fit` rows are refused; row `big` alone is over the budget. */
function list(n: number, fit: number, big = -1) {
  const reads: Array<[number, number]> = [];
  const read = async (offset: number, limit: number): Promise<number[]> => {
    reads.push([offset, limit]);
    const rows = Array.from({ length: Math.max(0, Math.min(limit, n - offset)) }, (_, i) => offset + i);
    if (rows.includes(big)) throw rows[0] === big ? alone : fewer(big - offset);
    if (rows.length > fit) throw fewer(fit);
    return rows;
  };
  return { read, reads };
}

describe('readWithinBudget', () => {
  test('reads a page in reads of the size a 413 names, and keeps that size', async () => {
    const { read, reads } = list(25, 3);
    const size = { current: 10 };
    assert.deepEqual(await readWithinBudget(read, 0, 10, size, () => -1), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(size.current, 3);
    assert.deepEqual(await readWithinBudget(read, 10, 10, size, () => -1), [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    assert.deepEqual(await readWithinBudget(read, 20, 10, size, () => -1), [20, 21, 22, 23, 24], 'short only at the end');
    assert.deepEqual(reads.slice(0, 5), [[0, 10], [0, 3], [3, 3], [6, 3], [9, 1]]);
    assert.ok(reads.slice(1).every(([, l]) => l <= 3), 'no read over the size learnt');
  });

  test('a row over the budget alone becomes a stand-in, and the reads go on past it', async () => {
    const { read } = list(8, 10, 4);
    const size = { current: 10 };
    const rows = await readWithinBudget(read, 0, 10, size, (id, offset) => (assert.equal(id, ID), -100 - offset));
    assert.deepEqual(rows, [0, 1, 2, 3, -104, 5, 6, 7]);
  });

  test('other failures are thrown', async () => {
    const boom = new ApiError(500, 'boom');
    await assert.rejects(readWithinBudget(async () => Promise.reject(boom), 0, 5, { current: 5 }, () => 0), boom);
  });

  test('pageBudgetHint reads both 413s and nothing else', () => {
    assert.deepEqual(pageBudgetHint(fewer(42)), { fewer: 42 });
    assert.deepEqual(pageBudgetHint(alone), { alone: ID });
    assert.equal(pageBudgetHint(new ApiError(413, 'invalid body: too large')), null);
    assert.equal(pageBudgetHint(new Error('limit ≤ 3')), null);
  });
});
