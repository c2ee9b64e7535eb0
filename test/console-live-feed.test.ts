/**
 * End-to-end, in headless Chromium on the real stack (stub upstream, admin on PostgreSQL, proxy):
 * the Requests page's live feed (admin/console/request-feed.ts) shows, without a reload,
 * (1) every request of a burst far larger than one page (200) stored between two polls, newest
 * created first, and then polls with a count only while nothing new is stored; (2) a request stored
 * long after it started (created 3 minutes before it was stored, as a long agent stream is logged
 * when it ends), at its place by created_at; (3) such a request older than every row loaded so far,
 * below them, and scrolling on brings the rows between once each, in order; (4) a row whose storing
 * statement started before the newest row shown but committed after it (updated_at older than the
 * newest held). (1) to (3) failed before the feed polled by updated_at; (4) guards the look-back.
 *
 * Records go through admin's normal ingestion path: a control-plane WebSocket link sending a
 * `records` batch, as a proxy does (the stack's own proxy could not make a request that started
 * 3 minutes ago without taking 3 minutes). Each case filters on a property name of its own, typed
 * in one step, so one filter generation lists it; the burst is sent only once that generation's
 * first page is shown and a poll has run after it, so the rows can reach the page only through the
 * poll (the first page was complete: nothing is left to scrolling).
 * Run: node --import tsx --test test/console-live-feed.test.ts
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import WebSocket from 'ws';
import type { LogRecord } from '../shared/record.ts';
import { logRecord } from './rest-support.ts';
import { requestRow, setField, shown, signIn, testId, until } from './support/console-page.ts';
import { useConsoleStack } from './support/console-stack.ts';
import { uniq, waitFor, type Stack } from './support/stack.ts';

let stack: Stack;
let page: Page;
useConsoleStack((started) => ({ stack, page } = started));

/** The stack's organization (the bootstrap key's). */
async function organizationId(): Promise<string> {
  const [row] = await stack.db.sql<{ organization_id: string }[]>`select organization_id from api_key limit 1`;
  return row!.organization_id;
}

/** `n` records with property `name` = 'yes', the newest created `agoMs` before now, each 1 ms older than the one before. */
async function records(name: string, n: number, agoMs = 0): Promise<LogRecord[]> {
  const org = await organizationId();
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => {
    const createdAt = now - agoMs - i;
    return logRecord(org, { requestId: randomUUID(), createdAt, responseCreatedAt: now, delayMs: now - createdAt, properties: { [name]: 'yes' } });
  });
}

/**
 * Stores `batch` as a proxy does: one `records` message on a control-plane link, resolved once
 * admin acknowledged it (after the commit) with every record stored.
 */
async function ingest(batch: LogRecord[]): Promise<void> {
  const ws = new WebSocket(`ws://127.0.0.1:${stack.admin.port}/v1/control-plane`, { headers: { authorization: `Bearer ${stack.apiKey}` } });
  const messages: Array<{ type: string; batchId?: string; stored?: number }> = [];
  ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  try {
    await waitFor(() => messages.some((m) => m.type === 'keys.snapshot'), 5_000);
    const batchId = randomUUID();
    ws.send(JSON.stringify({ type: 'records', batchId, records: batch }));
    await waitFor(() => messages.some((m) => m.batchId === batchId), 10_000);
    assert.deepEqual(messages.find((m) => m.batchId === batchId), { type: 'records.ack', batchId, stored: batch.length }, 'every record stored');
  } finally {
    ws.close();
  }
}

/**
 * Lists the Requests page filtered on rows having property `name`, waits for the rows `ids` (all
 * the filter matches), then for one request to the request API made after they showed to end:
 * the filter generation is settled and a poll ran, so whatever is stored from now on can only come
 * in by polling.
 */
async function listAndWaitForPoll(name: string, ids: readonly string[]): Promise<void> {
  await testId(page, 'nav-requests').click();
  await setField(page, 'filter-property-value', '');
  await setField(page, 'filter-property-key', name);
  for (const id of ids) await shown(page, requestRow(page, id), `request ${id}`, 10_000);
  await until(page, `the page holds exactly the ${ids.length} requests`, async () => (await testId(page, 'request-row').count()) === ids.length);
  const poll = await page.waitForRequest((r) => /\/v1\/request\/(query|count)$/.test(r.url()), { timeout: 5_000 });
  await poll.response();
}

/**
 * The request ids of every row of the (virtualized) table, top to bottom: the table is scrolled
 * from top to bottom, collecting the rows rendered at each step.
 */
async function idsInTable(): Promise<string[]> {
  // A string, not a function: tsx would wrap the function's inner names in a helper the page lacks.
  return page.evaluate(`(async () => {
    const body = document.querySelector('.rtable-body');
    const byTop = new Map();
    for (let top = 0; ; top += Math.max(100, Math.floor(body.clientHeight / 2))) {
      body.scrollTop = top;
      await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
      for (const el of document.querySelectorAll('[data-testid="request-row"]')) {
        byTop.set(Math.round(el.getBoundingClientRect().top - body.getBoundingClientRect().top + body.scrollTop), el.dataset.requestId);
      }
      if (top >= body.scrollHeight) break;
    }
    body.scrollTop = 0;
    return [...byTop.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
  })()`);
}

/** The ids of `batch`, newest created first (the table's order; ties by id descending, as admin's). */
function byCreatedDesc(batch: readonly LogRecord[]): string[] {
  return [...batch].sort((a, b) => b.createdAt - a.createdAt || (a.requestId < b.requestId ? 1 : -1)).map((r) => r.requestId);
}

/** How many rows the page holds (the count's `data-loaded`). */
async function loaded(): Promise<number> {
  return Number(await testId(page, 'request-count').getAttribute('data-loaded'));
}

describe('the console: the Requests live feed', { concurrency: false }, () => {
  test('sign in', async () => {
    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
  });

  test('a burst of 650 requests stored between two polls: every one appears without a reload, newest first', async () => {
    const name = `burst-${uniq()}`;
    const first = await records(name, 1, 60_000);
    await ingest(first);
    await listAndWaitForPoll(name, [first[0]!.requestId]);

    // One batch, one commit (COPYs of 500 rows: two statements back to back): more than three pages.
    const burst = await records(name, 650);
    await ingest(burst);
    await until(page, 'all 651 rows held', async () => (await loaded()) === 651, 15_000).catch(async (err) => {
      throw new Error(`${(err as Error).message}: ${await loaded()} held`);
    });
    const expected = byCreatedDesc([...burst, ...first]);
    const ids = await idsInTable();
    const missing = expected.filter((id) => !ids.includes(id));
    assert.deepEqual(missing, [], `${missing.length} of the burst not shown`);
    assert.deepEqual(ids, expected, 'newest created first');
    assert.equal((await testId(page, 'request-count').innerText()).trim(), '651 requests');

    // Later polls neither add a row twice nor lose one, and, nothing new being stored, read no rows
    // (bodies and all): a count each.
    const asked: string[] = [];
    const onRequest = (r: { url(): string }) => void (/\/v1\/request\/(query|count)$/.test(r.url()) && asked.push(r.url().replace(/^.*\/v1\/request\//, '')));
    page.on('request', onRequest);
    await page.waitForTimeout(2_500);
    page.off('request', onRequest);
    assert.equal(await loaded(), 651);
    assert.ok(asked.length >= 1 && asked.every((what) => what === 'count'), `quiet polls asked: ${asked.join(', ')}`);
  });

  test('a request stored 3 minutes after it started appears without a reload, at its place by created_at', async () => {
    const name = `late-${uniq()}`;
    const recent = await records(name, 2);
    await ingest(recent);
    await listAndWaitForPoll(name, recent.map((r) => r.requestId));

    const late = await records(name, 1, 3 * 60_000);
    await ingest(late);
    await shown(page, requestRow(page, late[0]!.requestId), 'the request stored 3 minutes after it started', 5_000);
    assert.deepEqual(await idsInTable(), byCreatedDesc([...recent, ...late]), 'the late request below the newer ones');
    assert.equal((await testId(page, 'request-count').innerText()).trim(), '3 requests');
  });

  test('a late request older than every row loaded so far shows below them, and scrolling on keeps one of each in created_at order', async () => {
    const name = `frontier-${uniq()}`;
    const recent = await records(name, 250);
    await ingest(recent);
    // The 50 oldest were stored a minute before the rest, as a live log's older rows are: out of
    // the poll's look-back, so only scrolling brings them.
    await stack.db.sql`update request_log set updated_at = updated_at - interval '1 minute' where id = any(${recent.slice(200).map((r) => r.requestId)}::uuid[])`;
    await testId(page, 'nav-requests').click();
    await setField(page, 'filter-property-value', '');
    await setField(page, 'filter-property-key', name);
    await shown(page, requestRow(page, recent[0]!.requestId), 'the newest request', 10_000);
    await until(page, 'the first page held', async () => (await loaded()) === 200, 10_000);

    // Created before all 250 (so 50 rows not loaded yet lie between it and the page), stored now.
    const late = await records(name, 1, 3 * 60_000);
    await ingest(late);
    await until(page, 'the late request held', async () => (await loaded()) === 201, 5_000);
    // Scrolling to the end (idsInTable does) brings the other 50 above it; it is not listed twice.
    await idsInTable();
    await until(page, 'all 251 held', async () => (await loaded()) === 251, 10_000);
    assert.deepEqual(await idsInTable(), byCreatedDesc([...recent, ...late]));
  });

  test('a row whose storing statement started before the newest row shown but committed after it appears', async () => {
    const name = `commit-order-${uniq()}`;
    const first = await records(name, 1);
    await ingest(first);
    await listAndWaitForPoll(name, [first[0]!.requestId]);
    // As a COPY that began 2 s before `first`'s and committed after it: updated_at older than the newest held.
    const org = await organizationId();
    const [row] = await stack.db.sql<{ id: string }[]>`
      insert into request_log (id, organization_id, created_at, response_created_at, updated_at, path, provider, request_model, status, properties, request_body)
      select gen_random_uuid(), ${org}, now() - interval '10 seconds', now() - interval '9 seconds', r.updated_at - interval '2 seconds',
        '/v1/chat/completions', 'openai', 'gpt-4o-mini', 200, jsonb_build_object(${name}::text, 'yes'), '{"model":"gpt-4o-mini","messages":[]}'::jsonb
      from request_log r where r.id = ${first[0]!.requestId}
      returning id`;
    await shown(page, requestRow(page, row!.id), 'the row committed out of order', 5_000);
    assert.equal(await loaded(), 2);
  });
});
