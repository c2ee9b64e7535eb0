/**
 * The two hints a 413 of a page over admin's body budget (`admin.max-page-body-bytes`) carries in its message, as
 * admin writes them (admin/resources/requests/page-budget.ts) and as the console reads them back
 * (admin/console/page-budget.ts): one wording, so that rewording the message cannot silently break the console's
 * lists. The REST envelope has only a message (`{"data": null, "error": "..."}`), hence text.
 */

/** The hint to read fewer rows: `limit ≤ K` (K ≥ 1, rows). */
export function fewerRowsHint(limit: number): string {
  return `limit ≤ ${limit}`;
}

/** The hint to read the page's first row alone: `GET /v1/request/<id>`. */
export function readAloneHint(requestId: string): string {
  return `GET /v1/request/${requestId}`;
}

const FEWER = /limit ≤ (\d+)/;
const ALONE = /GET \/v1\/request\/([0-9a-fA-F-]{36})/;

/**
 * The hint in a 413's message: `{fewer: K}`, `{alone: id}` (lower case), or null when it carries neither.
 */
export function readPageBudgetHint(message: string): { fewer: number } | { alone: string } | null {
  const fewer = FEWER.exec(message);
  if (fewer && Number(fewer[1]) >= 1) return { fewer: Number(fewer[1]) };
  const alone = ALONE.exec(message);
  return alone ? { alone: alone[1]!.toLowerCase() } : null;
}
