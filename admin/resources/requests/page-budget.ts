/**
 * The body budget of a list route's page: before a route loads a page of logged requests with their
 * bodies, it reads the page's ids and body sizes (as PostgreSQL stores the text, not compressed)
 * and loads the bodies only when they fit `admin.max-page-body-bytes`
 * ({@link DEFAULT_MAX_PAGE_BODY_BYTES}); else the caller gets a 413 naming `limit` and the largest
 * limit that fits. A shorter page is never answered instead: offset-paging clients advance by
 * `limit`, and the console stops at a short page, so either would skip rows silently.
 */
import prettyBytes from 'pretty-bytes';
import { fewerRowsHint, readAloneHint } from '../../../shared/page-budget-hint.ts';
import type postgres from 'postgres';
import { DEFAULT_MAX_PAGE_BODY_BYTES } from '../../../shared/config.ts';
import { HttpError } from '../../http.ts';

export { DEFAULT_MAX_PAGE_BODY_BYTES };

/** One row of a size query: the row's id (what the body query selects by) and its body bytes. */
export interface SizedRow {
  id: string;
  body_bytes: number;
}

/** Rows a size query's cursor fetches at a time (ids and numbers only: a few KB). */
const SIZE_BATCH = 1000;

/** A size for the error, in binary units (`64 MiB`, `300 KiB`, `60 B`): a small budget must not read `0.0 MiB`. */
const mib = (bytes: number): string => prettyBytes(bytes, { binary: true, maximumFractionDigits: 1 });

/**
 * Reads a page's ids in order and checks their bodies fit `budgetBytes`.
 * `sizes` selects `{id, body_bytes}` of the page in its order; it is read with a cursor and stopped
 * at the first row past the budget, so PostgreSQL measures no more than the budget and one row.
 * @param what the rows' name in the error, one and many (`request`, `requests`).
 * @returns the page's ids in order (the body query then loads exactly these).
 * @throws {HttpError} 413 naming `limit` when the page's bodies exceed `budgetBytes`.
 */
export async function pageIdsWithinBudget(sizes: postgres.PendingQuery<postgres.Row[]>, budgetBytes: number, what: { one: string; many: string }): Promise<string[]> {
  const ids: string[] = [];
  let total = 0;
  for await (const batch of sizes.cursor(SIZE_BATCH)) {
    for (const row of batch as unknown as SizedRow[]) {
      total += Number(row.body_bytes);
      if (total > budgetBytes) throw overBudget(ids.length, total, budgetBytes, what, row.id);
      ids.push(row.id);
    }
  }
  return ids;
}

/** The 413 for a page whose first `fitting + 1` rows hold `total` bytes, more than `budgetBytes`. */
function overBudget(fitting: number, total: number, budgetBytes: number, what: { one: string; many: string }, firstId: string): HttpError {
  const budget = `more than the ${mib(budgetBytes)} of bodies one answer may carry (admin.max-page-body-bytes)`;
  if (fitting === 0) {
    return new HttpError(413, `limit: the first ${what.one} of this page alone holds ${mib(total)} of bodies, ${budget}; read it alone with ${readAloneHint(firstId)}, or page past it`);
  }
  return new HttpError(413, `limit: the first ${fitting + 1} ${what.many} of this page already hold ${mib(total)} of bodies, ${budget}; ask for fewer (${fewerRowsHint(fitting)})`);
}

/**
 * `rows` in the order of `ids` (rows whose id is not in `ids` dropped; an id without a row, e.g.
 * deleted by retention since the ids were read, is skipped).
 */
export function inIdOrder<T>(ids: readonly string[], rows: readonly T[], idOf: (row: T) => string): T[] {
  const byId = new Map(rows.map((r) => [idOf(r), r]));
  const out: T[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row !== undefined) out.push(row);
  }
  return out;
}
