/**
 * A dataset's rows as JSON Lines (`GET /v1/experiment/dataset/{datasetId}/export`), read from the
 * database a page at a time so a dataset of any size is exported in bounded memory: one page of
 * {@link EXPORT_PAGE_ROWS} rows and {@link EXPORT_PAGE_BYTES} of bodies at most (a row alone over
 * that is a page of its own), plus what the stream buffers. A page's keys and body sizes are read
 * first (the bodies riding through the sort as TOAST pointers, as page-budget.ts's size queries
 * do), then the bodies of the rows that fit.
 *
 * Pages follow the rows' order by keyset (position, then request id), each page its own short
 * statement: no connection of the pool is held while a slow client reads. The price is no single
 * snapshot: a row added while an export runs is in it when its page is read after the addition,
 * and a removal while an export runs renumbers the later rows down by one, so the export can miss
 * the one row that moved onto the last position already sent. Export again for an exact copy.
 */
import type { Sql } from '../../db.ts';

/** Rows read per statement at most. */
export const EXPORT_PAGE_ROWS = 200;
/**
 * Body bytes (request, response and prompt inputs as PostgreSQL stores their JSON text, not
 * compressed) one page reads at most: 200 rows of a coding agent's 2 MB bodies were 400 MB of text,
 * and more once parsed; 16 MiB keeps a page a few dozen MB in memory and still 8+ rows of 2 MB.
 */
export const EXPORT_PAGE_BYTES = 16 * 1024 * 1024;

/** A row's place in the export order (position, then request id). */
interface RowKey {
  position: number;
  requestId: string;
}

/**
 * One line of the export, as {@link exportLine} writes it: the row's request with its bodies (as
 * stored), the managed-prompt inputs and version it was made with (null without one), and its
 * scores (name → value; booleans stored as 1 or 0; `{}` without any).
 */
interface ExportRow {
  request_id: string;
  position: number;
  created_at: Date;
  provider: string;
  request_model: string | null;
  response_model: string | null;
  status: number;
  request_body: unknown;
  response_body: unknown;
  prompt_inputs: Record<string, unknown> | null;
  prompt_version_id: string | null;
  scores: Record<string, number>;
}

/**
 * The name of the organization's dataset, or null when the dataset is not the organization's.
 */
export async function datasetName(sql: Sql, organizationId: string, datasetId: string): Promise<string | null> {
  const [ds] = await sql<{ name: string }[]>`select name from dataset where id = ${datasetId} and organization_id = ${organizationId}`;
  return ds?.name ?? null;
}

/** `dr` rows after `after` (null: from the first row) and up to `through` (null: no end), in the export order. */
function keyRange(sql: Sql, after: RowKey | null, through: RowKey | null) {
  // `position >= p` alone is what the (dataset_id, position) index can seek on; the `or` breaks ties.
  const from = after
    ? sql`and dr.position >= ${after.position} and (dr.position > ${after.position} or dr.request_id > ${after.requestId})`
    : sql``;
  const to = through
    ? sql`and dr.position <= ${through.position} and (dr.position < ${through.position} or dr.request_id <= ${through.requestId})`
    : sql``;
  return sql`${from} ${to}`;
}

/**
 * How many of the (at most `limit`) rows after `after` one page reads: as many as fit `maxBytes`
 * of bodies, at least one; and the key of the last of them (null: no rows left).
 */
async function plannedPage(sql: Sql, organizationId: string, datasetId: string, after: RowKey | null, limit: number, maxBytes: number): Promise<{ rows: number; through: RowKey } | null> {
  const sizes = await sql<{ position: number; request_id: string; body_bytes: number }[]>`
    select p.position, p.request_id, (coalesce(octet_length(p.request_body::text), 0) + coalesce(octet_length(p.response_body::text), 0)
      + coalesce(octet_length(p.prompt_inputs::text), 0))::float8 as body_bytes
    from (select dr.position, dr.request_id, r.request_body, r.response_body, r.prompt_inputs
      from dataset_row dr join request_log r on r.id = dr.request_id and r.organization_id = ${organizationId}
      where dr.dataset_id = ${datasetId} and dr.organization_id = ${organizationId} ${keyRange(sql, after, null)}
      order by dr.position, dr.request_id
      limit ${limit}) p`;
  return pageThatFits(sizes, maxBytes);
}

/**
 * The rows of `sizes` (in order) a page takes: the longest prefix whose `body_bytes` sum to at most
 * `maxBytes`, and never fewer than one (a row over the bound alone is still exported, as its own page).
 * @returns the prefix's length and its last row's key; null for no rows.
 */
export function pageThatFits(sizes: ReadonlyArray<{ position: number; request_id: string; body_bytes: number }>, maxBytes: number): { rows: number; through: RowKey } | null {
  if (sizes.length === 0) return null;
  let total = Number(sizes[0]!.body_bytes);
  let n = 1;
  while (n < sizes.length && total + Number(sizes[n]!.body_bytes) <= maxBytes) total += Number(sizes[n++]!.body_bytes);
  const last = sizes[n - 1]!;
  return { rows: n, through: { position: last.position, requestId: last.request_id } };
}

/** The rows after `after` through `through`, `limit` at most, in order, with their bodies. */
function exportPage(sql: Sql, organizationId: string, datasetId: string, after: RowKey | null, through: RowKey, limit: number): Promise<ExportRow[]> {
  return sql<ExportRow[]>`
    select dr.request_id, dr.position, r.created_at, r.provider, r.request_model, r.response_model, r.status,
      r.request_body, r.response_body, r.prompt_inputs, r.prompt_version_id,
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s
        where s.request_id = r.id and s.organization_id = ${organizationId}) as scores
    from dataset_row dr join request_log r on r.id = dr.request_id and r.organization_id = ${organizationId}
    where dr.dataset_id = ${datasetId} and dr.organization_id = ${organizationId} ${keyRange(sql, after, through)}
    order by dr.position, dr.request_id
    limit ${limit}`;
}

/**
 * One row as a line of JSON (with its `\n`). JSON.stringify escapes every line break inside a
 * string, so a body holding newlines stays on its line.
 */
function exportLine(r: ExportRow): string {
  return (
    JSON.stringify({
      request_id: r.request_id,
      position: r.position,
      created_at: r.created_at.toISOString(),
      provider: r.provider,
      model: r.request_model,
      response_model: r.response_model,
      status: r.status,
      request_body: r.request_body ?? null,
      response_body: r.response_body ?? null,
      prompt_inputs: r.prompt_inputs ?? null,
      prompt_version_id: r.prompt_version_id ?? null,
      scores: r.scores ?? {},
    }) + '\n'
  );
}

/**
 * The dataset's rows as JSON Lines, one chunk of text per page, in order: a page is at most
 * `pageRows` rows and `pageBytes` of bodies ({@link pageThatFits}); ends after the last row (an
 * empty dataset yields nothing). The caller checks the dataset is the organization's first
 * ({@link datasetName}); rows of other organizations are never read.
 * @throws the database's error when a page cannot be read (the stream that carries this fails).
 */
export async function* exportChunks(sql: Sql, organizationId: string, datasetId: string, pageRows = EXPORT_PAGE_ROWS, pageBytes = EXPORT_PAGE_BYTES): AsyncGenerator<string> {
  let after: RowKey | null = null;
  for (;;) {
    const plan = await plannedPage(sql, organizationId, datasetId, after, pageRows, pageBytes);
    if (plan === null) return;
    const rows = await exportPage(sql, organizationId, datasetId, after, plan.through, plan.rows);
    if (rows.length > 0) yield rows.map(exportLine).join('');
    // A whole page goes on after its last row (a row that came into the range since it was measured
    // is then read next); a page short of rows removed since, after the last row measured.
    const last = rows[rows.length - 1];
    after = rows.length === plan.rows && last ? { position: last.position, requestId: last.request_id } : plan.through;
  }
}
