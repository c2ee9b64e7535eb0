/**
 * End-to-end, in headless Chromium on the real stack (stub upstream, admin on PostgreSQL, proxy):
 * Ctrl+Enter in the prompt editor (one version per save, the commit message kept when the save
 * fails); "Dataset from filter" saying what it keeps, the dataset page's Load more and empty state;
 * a link to an unknown prompt.
 * Rows are stored straight into request_log, as admin's ingestion stores them (updated_at left to
 * its default, now()): 1,500 requests through the gateway would only be slower, not different.
 * Run: node --import tsx --test test/console-feed-datasets.test.ts
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot } from './support/browser.ts';
import { setField, shown, signIn, testId, until } from './support/console-page.ts';
import { useConsoleStack } from './support/console-stack.ts';
import { uniq, type Stack } from './support/stack.ts';

let stack: Stack;
let page: Page;
useConsoleStack((started) => ({ stack, page } = started));

/** The stack's organization (the bootstrap key's). */
async function organizationId(): Promise<string> {
  const [row] = await stack.db.sql<{ organization_id: string }[]>`select organization_id from api_key limit 1`;
  return row!.organization_id;
}

/** Stores `n` requests with property `batch` = `value` (each 1 ms apart), in one statement, as one ingestion COPY would. @returns their ids. */
async function storeRows(value: string, n: number): Promise<string[]> {
  const org = await organizationId();
  const rows = await stack.db.sql<{ id: string }[]>`
    insert into request_log (id, organization_id, created_at, response_created_at, path, provider, request_model, status, properties, request_body)
    select gen_random_uuid(), ${org}, now() - make_interval(secs => g / 1000.0), now(), '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200,
      jsonb_build_object('batch', ${value}::text), jsonb_build_object('model', 'gpt-4o-mini', 'messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'row ' || g)))
    from generate_series(1, ${n}) g
    returning id`;
  return rows.map((r) => r.id);
}

/** A REST call with the stack's key; the envelope's data. */
async function rest(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${stack.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  const json = JSON.parse(text);
  return json && typeof json === 'object' && 'data' in json ? json.data : json;
}

/** Shows the Requests page filtered on property batch = `value`. */
async function filterOnBatch(value: string): Promise<void> {
  await testId(page, 'nav-requests').click();
  await setField(page, 'filter-property-key', 'batch');
  await setField(page, 'filter-property-value', value);
}

async function countShown(): Promise<{ text: string }> {
  const el = testId(page, 'request-count');
  return { text: (await el.innerText()).trim() };
}

describe('the console: live feed, prompt saves and datasets', { concurrency: false }, () => {
  test('sign in', async () => {
    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
  });

  test('Ctrl+Enter pressed three times saves one version; a failed save keeps the commit message', async () => {
    const name = `ctrl-enter-${uniq()}`;
    const created = await rest('POST', '/v1/prompt-2025', { name, tags: [], promptBody: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    const promptId: string = created.id;
    await page.goto(`${stack.adminUrl}/#/prompts/${promptId}`);
    await shown(page, testId(page, 'prompt-commit-message'), 'the commit message field');
    await setField(page, 'prompt-commit-message', 'once');
    // Three keydowns within one task: React has not re-rendered the disabled button in between.
    await testId(page, 'prompt-body').evaluate((el) => {
      for (let i = 0; i < 3; i++) el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', ctrlKey: true, bubbles: true, cancelable: true }));
    });
    await until(page, 'the commit message is cleared after the save', async () => (await testId(page, 'prompt-commit-message').inputValue()) === '', 10_000);
    await new Promise((r) => setTimeout(r, 1_000));
    const versions: Array<{ major_version: number; minor_version: number }> = await rest('POST', '/v1/prompt-2025/query/versions', { promptId });
    assert.equal(versions.length, 2, `one new version: ${JSON.stringify(versions.map((v) => `${v.major_version}.${v.minor_version}`))}`);

    // The save fails (admin refuses it): the message typed stays for the next try.
    await page.route('**/v1/prompt-2025/update', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"refused for the test"}' }));
    try {
      await setField(page, 'prompt-commit-message', 'keep me');
      await testId(page, 'prompt-body').press('Control+Enter');
      await shown(page, page.getByText('refused for the test'), 'the error banner');
      assert.equal(await testId(page, 'prompt-commit-message').inputValue(), 'keep me');
    } finally {
      await page.unroute('**/v1/prompt-2025/update');
    }
  });

  test('a link to an unknown prompt says it was not found', async () => {
    await page.goto(`${stack.adminUrl}/#/prompts/00000000-0000-4000-8000-000000000000`);
    const msg = await shown(page, testId(page, 'prompt-not-found'), 'the not-found message');
    assert.match(await msg.innerText(), /not found/);
  });

  test('"Dataset from filter" says it keeps the newest 1,000 of the matching requests, before and after', async () => {
    const batch = `capped-${uniq()}`;
    await storeRows(batch, 1_432);
    await page.goto(`${stack.adminUrl}/#/requests`);
    await filterOnBatch(batch);
    await until(page, 'the count is 1,432', async () => (await countShown()).text === '1,432 requests', 10_000);
    await testId(page, 'dataset-from-filter').click();
    await until(page, 'the form says what it takes', async () => (await testId(page, 'dataset-take').innerText()).includes('the newest 1,000 of 1,432 matching requests'));
    await setField(page, 'dataset-name', `capped ${batch}`);
    await testId(page, 'dataset-create').click();
    const note = await shown(page, testId(page, 'dataset-created'), 'the created note');
    assert.match(await note.innerText(), /the newest 1,000 of 1,432 matching requests/);

    // Choosing the count: all 1,432.
    await testId(page, 'dataset-from-filter').click();
    await setField(page, 'dataset-limit', '2000');
    await until(page, 'the form says all', async () => (await testId(page, 'dataset-take').innerText()).includes('all 1,432 matching requests'));
    await setField(page, 'dataset-name', `all ${batch}`);
    await testId(page, 'dataset-create').click();
    await until(page, 'the note says all', async () => /all 1,432 matching requests/.test(await testId(page, 'dataset-created').innerText()));
    await screenshot(page, 'feed-02-dataset-created');
  });

  test('the dataset page loads all 1,432 rows with Load more and then says all are shown; an empty dataset says so', async () => {
    const batch = `paged-${uniq()}`;
    await storeRows(batch, 1_432);
    const made = await rest('POST', '/v1/experiment/dataset', { datasetName: `paged ${batch}`, filter: { request_response_rmt: { properties: { batch: { equals: batch } } } }, limit: 2_000 });
    assert.equal(made.rows, 1_432);
    await page.goto(`${stack.adminUrl}/#/datasets/${made.datasetId}`);
    await until(page, 'the first page', async () => (await testId(page, 'dataset-shown').innerText()).includes('500 requests shown; Load more'), 10_000);
    for (let i = 0; i < 10 && (await testId(page, 'dataset-request-row').count()) < 1_432; i++) {
      await (await shown(page, testId(page, 'dataset-load-more'), 'Load more', 10_000)).click();
      await until(page, 'the next page', async () => (await testId(page, 'dataset-load-more').count()) > 0 || (await testId(page, 'dataset-request-row').count()) === 1_432, 10_000);
    }
    assert.equal(await testId(page, 'dataset-request-row').count(), 1_432);
    assert.equal((await testId(page, 'dataset-shown').innerText()).trim(), 'all 1,432 requests shown');
    assert.equal(await testId(page, 'dataset-load-more').count(), 0, 'no Load more at the end');

    const empty = await rest('POST', '/v1/experiment/dataset', { datasetName: `empty ${batch}`, filter: { request_response_rmt: { properties: { batch: { equals: 'no-such-batch' } } } } });
    await page.goto(`${stack.adminUrl}/#/datasets/${empty.datasetId}`);
    await shown(page, testId(page, 'dataset-empty'), 'the empty-state line');
    assert.equal(await page.locator('.detail-pane th').count(), 0, 'no bare column headers');
  });
});
