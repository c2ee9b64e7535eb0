/**
 * End-to-end, in headless Chromium on the real stack (stub upstream, admin on PostgreSQL, proxy):
 * managing a dataset from the console. "Add to dataset" in a request's detail appends it; on the
 * dataset page, Remove takes a row out (the rest renumbered), Export JSONL downloads the rows as
 * JSON Lines, Rename renames, and Delete dataset (confirmed in place) deletes it.
 * Rows are stored straight into request_log, as admin's ingestion stores them.
 * Run: node --import tsx --test test/console-dataset-manage.test.ts
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot } from './support/browser.ts';
import { goneFrom, setField, shown, signIn, testId, until } from './support/console-page.ts';
import { useConsoleStack } from './support/console-stack.ts';
import { uniq, type Stack } from './support/stack.ts';

let stack: Stack;
let page: Page;
useConsoleStack((started) => ({ stack, page } = started));

/** Stores `n` requests with property `batch` = `value`, newest first in the returned ids. */
async function storeRows(value: string, n: number): Promise<string[]> {
  const [key] = await stack.db.sql<{ organization_id: string }[]>`select organization_id from api_key limit 1`;
  const rows = await stack.db.sql<{ id: string }[]>`
    insert into request_log (id, organization_id, created_at, response_created_at, path, provider, request_model, status, properties, request_body)
    select gen_random_uuid(), ${key!.organization_id}, now() - make_interval(secs => g), now(), '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200,
      jsonb_build_object('batch', ${value}::text), jsonb_build_object('model', 'gpt-4o-mini', 'messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'row ' || g)))
    from generate_series(1, ${n}) g
    order by g
    returning id`;
  return rows.map((r) => r.id);
}

/** A REST call with the stack's key: status and the envelope's data. */
async function rest(method: string, path: string, body?: unknown): Promise<{ status: number; data: any }> {
  const res = await fetch(`${stack.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = JSON.parse(await res.text());
  return { status: res.status, data: json?.data };
}

/** The dataset's request ids in order, read over REST. */
async function rowsOf(datasetId: string): Promise<string[]> {
  const r = await rest('POST', `/v1/experiment/dataset/${datasetId}/query`, { limit: 1000 });
  assert.equal(r.status, 200);
  return r.data.map((x: { request_id: string }) => x.request_id);
}

describe('the console: managing a dataset', { concurrency: false }, () => {
  let ids: string[] = [];
  let datasetId = '';
  const batch = `manage-${uniq()}`;

  test('sign in; a dataset of the two newest of three requests', async () => {
    ids = await storeRows(batch, 3);
    const made = await rest('POST', '/v1/experiment/dataset', { datasetName: `manage ${batch}`, filter: { request_response_rmt: { properties: { batch: { equals: batch } } } }, limit: 2 });
    datasetId = made.data.datasetId;
    assert.deepEqual(await rowsOf(datasetId), ids.slice(0, 2));
    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
  });

  test("a request's detail adds it to a chosen dataset, and says so when it is already there", async () => {
    await page.goto(`${stack.adminUrl}/#/requests/${ids[2]}`);
    await shown(page, testId(page, 'request-detail'), 'the request detail', 10_000);
    await until(page, 'the dataset is offered', async () => (await testId(page, 'add-to-dataset-select').locator(`option[value="${datasetId}"]`).count()) === 1, 10_000);
    await setField(page, 'add-to-dataset-select', datasetId);
    await testId(page, 'add-to-dataset-add').click();
    await until(page, 'the note says it was added', async () => (await testId(page, 'add-to-dataset-note').innerText()) === `added to manage ${batch} (3 requests)`);
    assert.deepEqual(await rowsOf(datasetId), ids);
    await screenshot(page, 'dataset-manage-00-added');
    await testId(page, 'add-to-dataset-add').click();
    await until(page, 'the note says it was there', async () => (await testId(page, 'add-to-dataset-note').innerText()) === `already in manage ${batch}`);
    assert.deepEqual(await rowsOf(datasetId), ids);
  });

  test('Remove takes the row out of the dataset; the rest move up', async () => {
    await page.goto(`${stack.adminUrl}/#/datasets/${datasetId}`);
    await until(page, 'three rows', async () => (await testId(page, 'dataset-request-row').count()) === 3, 10_000);
    await testId(page, 'dataset-request-row', `[data-request-id="${ids[0]}"]`).locator('[data-testid="dataset-row-remove"]').click();
    await until(page, 'two rows', async () => (await testId(page, 'dataset-request-row').count()) === 2, 10_000);
    const shownIds = await testId(page, 'dataset-request-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-request-id')));
    assert.deepEqual(shownIds, [ids[1], ids[2]]);
    const positions = await testId(page, 'dataset-request-row').evaluateAll((els) => els.map((e) => e.querySelector('td')?.textContent));
    assert.deepEqual(positions, ['0', '1']);
    assert.deepEqual(await rowsOf(datasetId), [ids[1], ids[2]]);
  });

  test('Export JSONL downloads one JSON object per row, named after the dataset', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), testId(page, 'dataset-export').click()]);
    assert.equal(download.suggestedFilename(), `manage ${batch}.jsonl`);
    const text = await readFile((await download.path())!, 'utf8');
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.request_id, l.position]), [[ids[1], 0], [ids[2], 1]]);
    assert.equal(lines[0].request_body.messages[0].content, 'row 2');
  });

  test('Rename renames it in the heading and the list', async () => {
    await testId(page, 'dataset-rename').click();
    await setField(page, 'dataset-rename-input', `renamed ${batch}`);
    await testId(page, 'dataset-rename-save').click();
    await until(page, 'the heading shows the new name', async () => (await testId(page, 'dataset-name').innerText()) === `renamed ${batch}`, 10_000);
    await until(page, 'the list shows it', async () => (await testId(page, 'dataset-row', `[data-dataset-id="${datasetId}"]`).innerText()).includes(`renamed ${batch}`));
    await screenshot(page, 'dataset-manage-01-renamed');
  });

  test('Delete dataset asks first; Keep keeps it; confirmed, it is gone', async () => {
    await testId(page, 'dataset-delete').click();
    await page.getByRole('button', { name: 'Keep' }).click();
    await shown(page, testId(page, 'dataset-delete'), 'the Delete button again');
    assert.equal((await rest('POST', `/v1/experiment/dataset/${datasetId}/query`, {})).status, 200);
    await testId(page, 'dataset-delete').click();
    await testId(page, 'dataset-delete-confirm').click();
    await goneFrom(page, testId(page, 'dataset-row', `[data-dataset-id="${datasetId}"]`), 'the deleted dataset in the list', 10_000);
    await shown(page, page.getByText('Choose a dataset.'), 'the page without an open dataset');
    assert.equal((await rest('POST', `/v1/experiment/dataset/${datasetId}/query`, {})).status, 404);
    assert.equal((await rest('GET', `/v1/request/${ids[0]}`)).status, 200, 'the requests stay logged');
  });
});
