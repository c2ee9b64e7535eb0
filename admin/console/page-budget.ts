/**
 * Reading an offset-paged list whose answers admin bounds by body bytes (`admin.max-page-body-bytes`,
 * admin/resources/requests/page-budget.ts): a page whose bodies are over the budget is a 413 naming
 * `limit` and the largest limit that fits (`limit ≤ K`), or, when its first row alone is over it,
 * where to read that row alone (`GET /v1/request/{id}`). {@link readWithinBudget} reads a page of the
 * size the list asked for in as many smaller reads as the budget needs, so the list never sees the
 * 413 and never a page shorter than asked for while rows remain (a short page ends a list).
 */
import { readPageBudgetHint } from '../../shared/page-budget-hint.ts';
import { ApiError } from './api.ts';

/**
 * What a 413 for a page's bodies asks for: `fewer` rows per read (`limit` at most that, ≥ 1), or,
 * when the first row of the page alone is over the budget, that row read `alone` (its request id).
 * Null for any other failure.
 */
export type PageBudgetHint = { fewer: number } | { alone: string } | null;

/** Reads {@link PageBudgetHint} from a failure: a 413 whose message carries one of admin's hints (shared/page-budget-hint.ts). */
export function pageBudgetHint(err: unknown): PageBudgetHint {
  if (!(err instanceof ApiError) || err.status !== 413 || !err.message.startsWith('limit:')) return null;
  return readPageBudgetHint(err.message);
}

/**
 * The rows per read a listing has learnt fit the budget. One per listing: rows next to each other
 * are alike (one agent's session), so a size that had to shrink stays shrunk for the rest of the
 * listing instead of meeting a 413 on every page; a new listing starts from the size asked for.
 */
export interface ReadSize {
  current: number;
}

/**
 * Reads rows `offset` to `offset + limit` of a list with `read(offset, limit)`, in reads of at most
 * `size.current` rows, lowering `size.current` to what a 413 names. A row alone over the budget is
 * given by `alone(requestId, offset)` (a stand-in the list shows) and the reads go on past it.
 * @returns `limit` rows, fewer only when the list ended.
 * @throws the {@link ApiError} of a failed read other than a page over the budget.
 */
export async function readWithinBudget<T>(
  read: (offset: number, limit: number) => Promise<T[]>,
  offset: number,
  limit: number,
  size: ReadSize,
  alone: (requestId: string, offset: number) => T,
): Promise<T[]> {
  const out: T[] = [];
  while (out.length < limit) {
    const want = Math.max(1, Math.min(limit - out.length, size.current));
    let page: T[];
    try {
      page = await read(offset + out.length, want);
    } catch (err) {
      const hint = pageBudgetHint(err);
      if (hint && 'alone' in hint) {
        out.push(alone(hint.alone, offset + out.length));
        continue;
      }
      // A hint not below what was asked (rows grew between admin's two reads) would loop: give up.
      if (!hint || want === 1) throw err;
      size.current = Math.min(hint.fewer, want - 1);
      continue;
    }
    out.push(...page);
    if (page.length < want) break;
  }
  return out;
}
