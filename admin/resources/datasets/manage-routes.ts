/**
 * Changing and exporting an existing dataset over REST (beyond the reference API; documented in
 * admin/openapi.ts). Every route is scoped to the key's organization: another organization's
 * dataset or request is a 404, as an unknown id is, and is never read or changed.
 * - `POST /v1/experiment/dataset/{datasetId}/request` {requestIds: 1–{@link MAX_REQUEST_IDS} UUIDs}
 *   (no other members) → `{added, skipped, rows}`: appends the requests in the order given, skipping
 *   those already present or repeated. More ids: 413. Any id not a request of the organization: 404
 *   naming the ids, and nothing is added.
 * - `DELETE /v1/experiment/dataset/{datasetId}/request/{requestId}` → null: removes the row (the
 *   logged request stays); the later rows move up, positions stay 0..n-1. 404 when not in the dataset.
 * - `PATCH /v1/experiment/dataset/{datasetId}` {datasetName: 1–200 characters} → DatasetResult.
 * - `DELETE /v1/experiment/dataset/{datasetId}` → null: the dataset and its rows, not the requests.
 * - `GET /v1/experiment/dataset/{datasetId}/export` → `application/x-ndjson`, an attachment named
 *   after the dataset: one JSON object per row, in order (see export.ts), streamed page by page.
 *   Errors before the first byte are the usual JSON envelope; a database failure later cuts the
 *   connection (the download is then incomplete). Each page reads the dataset as it is then: rows
 *   removed, or the dataset deleted, while an export runs are not in its later pages (export.ts).
 */
import { Readable } from 'node:stream';
import type Router from '@koa/router';
import type { Sql } from '../../db.ts';
import { auth, HttpError, ok } from '../../http.ts';
import { readSafeBody, uuidParam } from '../../validation.ts';
import { datasetName, exportChunks } from './export.ts';
import { addRequests, deleteDataset, removeRequest, renameDataset } from './manage-store.ts';
import { AddRequestsBody, MAX_REQUEST_IDS, RenameDatasetBody } from './schema.ts';

/** How many unknown request ids a 404 lists by name before saying how many more there are. */
const LISTED_MISSING = 10;

/** The 404 of {@link addRequests}' unknown ids: `requestIds: N requests not found: a, b, … and M more`. */
function missingRequests(missing: string[]): HttpError {
  const listed = missing.slice(0, LISTED_MISSING).join(', ');
  const more = missing.length > LISTED_MISSING ? ` and ${missing.length - LISTED_MISSING} more` : '';
  const noun = missing.length === 1 ? 'request' : 'requests';
  return new HttpError(404, `requestIds: ${missing.length} ${noun} not found: ${listed}${more} (none added)`);
}

/**
 * The export's file name: the dataset's name with the characters file systems refuse (`<>:"/\|?*`
 * and control characters) as `_`, at most 200 characters, and `.jsonl`. Koa's `attachment` writes
 * it as `filename` (ASCII fallback) and `filename*` (UTF-8).
 */
function exportFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  return `${name.replace(/[<>:"/\\|?*\u0000-\u001f\u007f]/g, '_').slice(0, 200)}.jsonl`;
}

/** The chunks of `rest`, after `first` (already read, so its failure could still be answered in JSON). */
async function* after(first: IteratorResult<string>, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

/** Registers the routes above. `maxBodyBytes` bounds request bodies. */
export function datasetManageRoutes(router: Router, sql: Sql, maxBodyBytes: number): void {
  router.post('/v1/experiment/dataset/:datasetId/request', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const body = await readSafeBody(ctx, AddRequestsBody, maxBodyBytes);
    if (body.requestIds.length > MAX_REQUEST_IDS) {
      throw new HttpError(413, `invalid body: requestIds: at most ${MAX_REQUEST_IDS} ids per call, got ${body.requestIds.length}`);
    }
    const result = await addRequests(sql, auth(ctx).organizationId, id, body.requestIds);
    if (!result) throw new HttpError(404, `dataset ${id} not found`);
    if ('missing' in result) throw missingRequests(result.missing);
    ok(ctx, result);
  });

  router.delete('/v1/experiment/dataset/:datasetId/request/:requestId', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const requestId = uuidParam(ctx, 'requestId', 'request');
    const outcome = await removeRequest(sql, auth(ctx).organizationId, id, requestId);
    if (outcome === 'no-dataset') throw new HttpError(404, `dataset ${id} not found`);
    if (outcome === 'no-row') throw new HttpError(404, `request ${requestId} not found in dataset ${id}`);
    ok(ctx, null);
  });

  router.patch('/v1/experiment/dataset/:datasetId', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const body = await readSafeBody(ctx, RenameDatasetBody, maxBodyBytes);
    const renamed = await renameDataset(sql, auth(ctx).organizationId, id, body.datasetName);
    if (!renamed) throw new HttpError(404, `dataset ${id} not found`);
    ok(ctx, { id: renamed.id, name: renamed.name, created_at: renamed.created_at.toISOString() });
  });

  router.delete('/v1/experiment/dataset/:datasetId', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    if (!(await deleteDataset(sql, auth(ctx).organizationId, id))) throw new HttpError(404, `dataset ${id} not found`);
    ok(ctx, null);
  });

  router.get('/v1/experiment/dataset/:datasetId/export', async (ctx) => {
    const id = uuidParam(ctx, 'datasetId', 'dataset');
    const organizationId = auth(ctx).organizationId;
    const name = await datasetName(sql, organizationId, id);
    if (name === null) throw new HttpError(404, `dataset ${id} not found`);
    const chunks = exportChunks(sql, organizationId, id);
    const first = await chunks.next();
    ctx.status = 200;
    ctx.type = 'application/x-ndjson; charset=utf-8';
    ctx.attachment(exportFileName(name));
    // Bytes, not objects: the stream then buffers ~16 KiB ahead of a slow client, not 16 pages.
    ctx.body = Readable.from(after(first, chunks), { objectMode: false });
  });
}
