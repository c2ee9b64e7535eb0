/**
 * End-to-end, in headless Chromium on the real stack with `admin.max-page-body-bytes` lowered to
 * 1 MiB: requests of ~300 KB of bodies each (a coding agent's), 230 of them plus one of ~1.2 MiB
 * (over the budget alone). Admin refuses (413) a page of them with bodies; the console still works:
 * (1) the Requests page lists every row (two keyset pages: scrolling brings the second), newest
 * first, without an error, and a row's detail shows its body (read alone, GET /v1/request/{id});
 * (2) a dataset of them lists every row on the dataset page, previews included, the row over the
 * budget as a stand-in that links to the request. Both failed before (the 413 in the error banner,
 * no rows).
 * Run: node --import tsx --test test/console-large-bodies.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { buildConsole } from '../scripts/build.ts';
import { launchBrowser, screenshot, type HeadlessBrowser } from './support/browser.ts';
import { requestRow, setField, shown, signIn, testId, until } from './support/console-page.ts';
import { defaultConfig, startStack, uniq, type Stack } from './support/stack.ts';

const MiB = 1024 * 1024;
/** Rows of ~300 KB of bodies: more than one keyset page (200) of the feed. */
const ROWS = 230;
const HALF = 150 * 1024;

let stack: Stack;
let browser: HeadlessBrowser;
let page: Page;
const batch = `big${uniq()}`;
/** The request ids, newest first; `huge` is the newest, over the budget alone. */
let ids: string[] = [];
let huge = '';

before(async () => {
  await buildConsole();
  stack = await startStack({ config: (stubUrl) => ({ ...defaultConfig(stubUrl), admin: { 'max-page-body-bytes': MiB } }) });
  browser = await launchBrowser();
  page = browser.page;
  page.setDefaultTimeout(10_000);
  const [org] = await stack.db.sql<{ organization_id: string }[]>`select organization_id from api_key limit 1`;
  // Built in SQL (repeat), so 70 MB of bodies are not sent from here.
  const rows = await stack.db.sql<{ id: string }[]>`
    insert into request_log (id, organization_id, created_at, path, provider, request_model, status, request_body, response_body, properties)
    select gen_random_uuid(), ${org!.organization_id}, now() - make_interval(secs => g / 1000.0), '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200,
      json_build_object('model', 'gpt-4o-mini', 'messages', json_build_array(json_build_object('role', 'user',
        'content', 'marker-' || g::text || ' ' || repeat('q', case when g = 0 then 4 * ${HALF}::int else ${HALF}::int end)))),
      json_build_object('id', 'c' || g::text, 'object', 'chat.completion', 'model', 'gpt-4o-mini', 'choices', json_build_array(json_build_object('index', 0,
        'message', json_build_object('role', 'assistant', 'content', repeat('a', case when g = 0 then 4 * ${HALF}::int else ${HALF}::int end)), 'finish_reason', 'stop'))),
      jsonb_build_object(${batch}::text, 'yes')
    from generate_series(0, ${ROWS}) g
    order by g
    returning id`;
  ids = rows.map((r) => r.id);
  huge = ids[0]!;
});
after(async () => {
  await browser?.close();
  await stack?.stop();
});

/** The request ids of every row of the (virtualized) table, top to bottom, scrolling it through. */
async function idsInTable(): Promise<string[]> {
  // A string, not a function: tsx would wrap the function's inner names in a helper the page lacks.
  return page.evaluate(`(async () => {
    const body = document.querySelector('.rtable-body');
    const byTop = new Map();
    for (let top = 0; ; top += Math.max(100, Math.floor(body.clientHeight / 2))) {
      body.scrollTop = top;
      await new Promise((r) => setTimeout(r, 50));
      for (const el of document.querySelectorAll('[data-testid="request-row"]')) {
        byTop.set(Math.round(el.getBoundingClientRect().top - body.getBoundingClientRect().top + body.scrollTop), el.dataset.requestId);
      }
      if (top >= body.scrollHeight) break;
    }
    body.scrollTop = 0;
    return [...byTop.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  })()`);
}

const loaded = async (): Promise<number> => Number(await testId(page, 'request-count').getAttribute('data-loaded'));

describe('the console over requests of large bodies (a 1 MiB page budget)', { concurrency: false }, () => {
  test('admin refuses a page of them with bodies', async () => {
    const res = await fetch(`${stack.adminUrl}/v1/request/query`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filter: 'all', limit: 200 }),
    });
    assert.equal(res.status, 413);
  });

  test('the Requests page lists every row (scrolling to the second page), no error', async () => {
    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
    await testId(page, 'nav-requests').click();
    await setField(page, 'filter-property-key', batch);
    await shown(page, requestRow(page, ids[0]!), 'the newest request');
    // The table asks for the next page as it nears the end: scroll until every row is held.
    await until(
      page,
      `all ${ids.length} rows loaded`,
      async () => {
        await page.evaluate(`document.querySelector('.rtable-body').scrollTop = 1e9`);
        return (await loaded()) === ids.length;
      },
      20_000,
    );
    assert.equal(await testId(page, 'error-banner').count(), 0, 'no error shown');
    assert.deepEqual(await idsInTable(), ids, 'every request once, newest first');
    await screenshot(page, 'large-bodies-00-requests');
  });

  test("a row's detail shows its body, the one over the budget too", async () => {
    for (const [i, id] of [[5, ids[5]!], [0, huge]] as const) {
      await page.goto(`${stack.adminUrl}/#/requests/${id}`);
      await shown(page, testId(page, 'request-detail'), 'the detail');
      await testId(page, 'tab-request-json').click();
      await until(page, `the request body of row ${i}`, async () => (await testId(page, 'raw-json').innerText()).includes(`marker-${i} qqqq`), 10_000);
    }
    assert.equal(await testId(page, 'error-banner').count(), 0, 'no error shown');
  });

  test('the dataset page lists every row of a dataset of them', async () => {
    const res = await fetch(`${stack.adminUrl}/v1/experiment/dataset`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ datasetName: `large ${batch}`, filter: { request_response_rmt: { properties: { [batch]: { equals: 'yes' } } } } }),
    });
    const made = (await res.json()) as { data: { datasetId: string; rows: number } };
    assert.equal(made.data.rows, ids.length);
    await page.goto(`${stack.adminUrl}/#/datasets/${made.data.datasetId}`);
    await until(page, 'every row shown', async () => (await testId(page, 'dataset-shown').count()) === 1 && (await testId(page, 'dataset-shown').innerText()) === `all ${ids.length} requests shown`, 30_000);
    assert.equal(await testId(page, 'error-banner').count(), 0, 'no error shown');
    const shownIds = await testId(page, 'dataset-request-row').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.requestId));
    assert.deepEqual([...shownIds].sort(), [...ids].sort(), 'every request once');
    const rowOf = (id: string) => testId(page, 'dataset-request-row', `[data-request-id="${id}"]`);
    const other = ids[7]!;
    assert.match(await rowOf(other).locator('[data-testid="dataset-row-preview"]').innerText(), /^gpt-4o-mini · marker-7 q+/);
    assert.match(await rowOf(huge).locator('[data-testid="dataset-row-preview"]').innerText(), /too large/);
    assert.equal(await rowOf(huge).locator(`a[href="#/requests/${huge}"]`).count(), 1, 'the row too large links to its request');
    await screenshot(page, 'large-bodies-01-dataset');
  });
});
