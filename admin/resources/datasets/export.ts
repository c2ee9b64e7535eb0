/**
 * A dataset's rows as JSON Lines (`GET /v1/experiment/dataset/{datasetId}/export`), read from the
 * database a page at a time so a dataset of any size is exported in bounded memory: one page of
 * {@link EXPORT_PAGE_ROWS} rows (each with its two bodies) at most, plus what the stream buffers.
 *
 * Pages follow the rows' order by keyset (position, then request id), each page its own short
 * statement: no connection of the pool is held while a slow client reads. The price is no single
 * snapshot: a row added while an export runs is in it when its page is read after the addition,
 * and a removal while an export runs renumbers the later rows down by one, so the export can miss
 * the one row that moved onto the last position already sent. Export again for an exact copy.
 */
import type { Sql } from '../../db.ts';

/** Rows read per statement. Bodies are at most the log's capture cap each, so this bounds memory. */
export const EXPORT_PAGE_ROWS = 200;

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

/** The page of rows after `after` (null: from the first row), in order. */
function exportPage(sql: Sql, organizationId: string, datasetId: string, after: { position: number; requestId: string } | null, limit: number): Promise<ExportRow[]> {
  // `position >= p` alone is what the (dataset_id, position) index can seek on; the `or` breaks ties.
  const keyset = after
    ? sql`and dr.position >= ${after.position} and (dr.position > ${after.position} or dr.request_id > ${after.requestId})`
    : sql``;
  return sql<ExportRow[]>`
    select dr.request_id, dr.position, r.created_at, r.provider, r.request_model, r.response_model, r.status,
      r.request_body, r.response_body, r.prompt_inputs, r.prompt_version_id,
      (select coalesce(jsonb_object_agg(s.name, s.value), '{}'::jsonb) from request_score s
        where s.request_id = r.id and s.organization_id = ${organizationId}) as scores
    from dataset_row dr join request_log r on r.id = dr.request_id and r.organization_id = ${organizationId}
    where dr.dataset_id = ${datasetId} and dr.organization_id = ${organizationId} ${keyset}
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
 * The dataset's rows as JSON Lines, one chunk of text per page of `pageRows` rows, in order; ends
 * after the last row (an empty dataset yields nothing). The caller checks the dataset is the
 * organization's first ({@link datasetName}); rows of other organizations are never read.
 * @throws the database's error when a page cannot be read (the stream that carries this fails).
 */
export async function* exportChunks(sql: Sql, organizationId: string, datasetId: string, pageRows = EXPORT_PAGE_ROWS): AsyncGenerator<string> {
  let after: { position: number; requestId: string } | null = null;
  for (;;) {
    const rows = await exportPage(sql, organizationId, datasetId, after, pageRows);
    if (rows.length === 0) return;
    yield rows.map(exportLine).join('');
    if (rows.length < pageRows) return;
    const last = rows[rows.length - 1]!;
    after = { position: last.position, requestId: last.request_id };
  }
}
