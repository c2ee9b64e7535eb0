/**
 * End-to-end: the console's side of issue 18 in headless Chromium — response-cache hits seen and
 * filtered on the Requests page, a hit's detail naming the request whose answer it served, and a
 * user's thumbs up or down given in the detail (stored through REST, shown in the table, filtered
 * on). The stack is the real one (stub upstream, admin on PostgreSQL, proxy); requests go through
 * the gateway with the official `openai` client. Without chromium the suite fails, it does not skip.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { formatCost } from '../admin/console/format.ts';
import { screenshot } from './support/browser.ts';
import { goneFrom, requestRow, setField, shown, signIn, testId, until } from './support/console-page.ts';
import { useConsoleStack } from './support/console-stack.ts';
import { fetchRecord, uniq, type Stack } from './support/stack.ts';

let stack: Stack;
let page: Page;
useConsoleStack((started) => ({ stack, page } = started));
const tag = uniq();

/** A chat request through the gateway; returns its id and the `Svc-Cache` header (null without the cache). */
async function chat(content: string, cached: boolean): Promise<{ id: string; cache: string | null }> {
  const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey: stack.apiKey, maxRetries: 0 });
  const headers = cached ? { 'Svc-Cache-Enabled': 'true' } : {};
  const { response } = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }, { headers }).withResponse();
  return { id: response.headers.get('svc-id')!, cache: response.headers.get('svc-cache') };
}

/** The logged request as REST returns it, once it is stored. */
async function record(id: string): Promise<Record<string, any>> {
  return fetchRecord(stack, id);
}

describe('the console: cache hits and feedback', { concurrency: false }, () => {
  let miss = '';
  let hit = '';
  let plain = '';

  test('a cache hit is marked in the Requests table, and the cache filter separates hits from the rest', async () => {
    const question = `Cached question (${tag})`;
    const first = await chat(question, true);
    const second = await chat(question, true);
    assert.deepEqual([first.cache, second.cache], ['MISS', 'HIT'], 'the gateway answered a miss, then a hit');
    miss = first.id;
    hit = second.id;
    plain = (await chat(`Uncached question (${tag})`, false)).id;
    assert.equal((await record(hit)).cache_reference_id, miss, 'REST: the hit names the miss');
    await record(plain);

    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
    await shown(page, requestRow(page, hit), 'the hit row');
    await shown(page, requestRow(page, hit).locator('.cache-hit'), 'the hit badge on the hit row');
    assert.equal(await requestRow(page, miss).locator('.cache-hit').count(), 0, 'the miss row has no hit badge');
    assert.equal(await requestRow(page, plain).locator('.cache-hit').count(), 0, 'the plain row has no hit badge');

    await setField(page, 'filter-cache', 'hits');
    await goneFrom(page, requestRow(page, miss), 'the miss under the hits filter');
    await goneFrom(page, requestRow(page, plain), 'the uncached request under the hits filter');
    await shown(page, requestRow(page, hit), 'the hit under the hits filter');
    await until(page, 'the count under the hits filter is 1', async () => (await testId(page, 'request-count').innerText()).startsWith('1 '));
    await screenshot(page, 'cache-01-hits-filter');

    await setField(page, 'filter-cache', 'misses');
    await goneFrom(page, requestRow(page, hit), 'the hit under the not-from-the-cache filter');
    await shown(page, requestRow(page, miss), 'the miss under the not-from-the-cache filter');
    await shown(page, requestRow(page, plain), 'the uncached request under the not-from-the-cache filter');
    await setField(page, 'filter-cache', 'any');
    await shown(page, requestRow(page, hit), 'the hit once the cache filter is cleared');
  });

  test("a hit's detail says it was answered from the cache, links to the request whose answer it served, and shows what it saved", async () => {
    await requestRow(page, hit).click();
    const facts = await shown(page, testId(page, 'cache-facts'), "the hit's cache facts");
    const text = await facts.innerText();
    assert.match(text, /hit/);
    const saved = Number((await record(hit)).properties['svc-cache-cost-saved']);
    assert.ok(saved > 0, 'REST: the hit saved a positive cost');
    // The console writes a sub-cent cost to two significant digits (format.ts formatCost).
    assert.ok(text.includes(formatCost(saved)), `the saved cost ${formatCost(saved)} is shown: ${JSON.stringify(text)}`);
    await screenshot(page, 'cache-02-hit-detail');

    await testId(page, 'cache-reference').click();
    await until(page, 'the detail switched to the miss', async () => (await testId(page, 'request-detail').locator('code').first().innerText()) === miss);
    await until(page, "the miss's cache facts say miss", async () => /miss/.test(await testId(page, 'cache-facts').innerText()));
    assert.equal(await testId(page, 'cache-reference').count(), 0, 'a miss links to no other request');
  });

  test('feedback given in the detail is stored, replaced by a second click, shown in the table and filtered on', async () => {
    await page.goto(`${stack.adminUrl}/#/requests/${plain}`);
    await shown(page, testId(page, 'feedback'), 'the feedback control');
    assert.equal(await testId(page, 'feedback-state').innerText(), 'not rated');

    await testId(page, 'feedback-up').click();
    await until(page, 'the control says rated up', async () => (await testId(page, 'feedback-state').innerText()).startsWith('rated up'));
    assert.equal(await testId(page, 'feedback-up').getAttribute('aria-pressed'), 'true');
    let stored = await record(plain);
    assert.equal(stored.feedback_rating, true, 'REST: the rating is stored');
    const firstId = stored.feedback_id;
    assert.ok(firstId, 'REST: the feedback has an id');
    await until(page, 'the row shows the up mark', async () => (await requestRow(page, plain).innerText()).includes('▲'));

    await testId(page, 'feedback-down').click();
    await until(page, 'the control says rated down', async () => (await testId(page, 'feedback-state').innerText()).startsWith('rated down'));
    stored = await record(plain);
    assert.equal(stored.feedback_rating, false, 'REST: the second click replaced the rating');
    assert.equal(stored.feedback_id, firstId, 'REST: replacing keeps the feedback id');
    await until(page, 'the row shows the down mark', async () => (await requestRow(page, plain).innerText()).includes('▼'));
    await screenshot(page, 'cache-03-feedback');

    await testId(page, 'detail-close').click();
    await setField(page, 'filter-feedback', 'down');
    await shown(page, requestRow(page, plain), 'the rated-down request under the rated-down filter');
    await goneFrom(page, requestRow(page, miss), 'an unrated request under the rated-down filter');
    await setField(page, 'filter-feedback', 'up');
    await goneFrom(page, requestRow(page, plain), 'the rated-down request under the rated-up filter');
    await setField(page, 'filter-feedback', 'any');
    await shown(page, requestRow(page, plain), 'the request once the feedback filter is cleared');
  });
});
