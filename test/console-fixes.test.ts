/**
 * End-to-end: what a new user of the console ran into, in headless Chromium on the real stack
 * (stub upstream, admin on PostgreSQL, proxy): a lazily loaded part that cannot be fetched (admin
 * restarted or upgraded under an open page), `<…>` text in messages, the Model and Provider columns
 * against the filters, the property and status filters, sub-micro-dollar costs, the New prompt
 * template, a stale error banner on API keys, and a long API key name on the Dashboard.
 * Requests go through the gateway; every check reads the page.
 * Run: node --import tsx --test test/console-fixes.test.ts
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { formatCost } from '../admin/console/format.ts';
import { screenshot, type HeadlessBrowser } from './support/browser.ts';
import { goneFrom, requestRow, setField, shown, signIn, testId, until } from './support/console-page.ts';
import { useConsoleStack } from './support/console-stack.ts';
import { clearStubRequests, fetchRecord, stubRequests, uniq, waitFor, type Stack } from './support/stack.ts';

let stack: Stack;
let page: Page;
let browser: HeadlessBrowser;
useConsoleStack((started) => ({ stack, page, browser } = started));
const tag = uniq();

/**
 * A request through the gateway (`path` under /ai) with `body` and extra headers; waits until admin
 * stored it and returns its id.
 */
async function send(path: string, body: unknown, headers: Record<string, string> = {}, apiKey = stack.apiKey): Promise<string> {
  const res = await fetch(`${stack.gatewayUrl}/ai${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.equal(res.status, 200, text.slice(0, 300));
  const id = res.headers.get('svc-id');
  assert.ok(id, 'the gateway names the request (Svc-Id)');
  await fetchRecord(stack, id);
  return id;
}

/** A chat request with one user message. */
function chat(content: string, headers: Record<string, string> = {}, model = 'openai/gpt-4o-mini'): Promise<string> {
  return send('/chat/completions', { model, messages: [{ role: 'user', content }] }, headers);
}

/** The text of one cell (by column id) of a request's row. */
async function cellText(requestId: string, column: string): Promise<string> {
  return (await requestRow(page, requestId).locator(`[data-column="${column}"]`).innerText()).trim();
}

describe('the console: fixes of a new user tester\'s findings', { concurrency: false }, () => {
  let plainId = '';

  test('a page or the request detail whose chunk cannot be fetched shows a message with Reload; Reload brings it back', async () => {
    plainId = await chat(`plain (${tag})`);
    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
    await shown(page, requestRow(page, plainId), 'the request row');
    // Admin upgraded under the open page: the chunk names this build asks for are gone (404).
    await page.route('**/chunk-*.js', (route) => route.fulfill({ status: 404, body: 'Not Found' }));

    await page.locator('body').press('3');
    const failed = await shown(page, testId(page, 'load-failed'), 'the message for a page that could not load', 10_000);
    assert.match(await failed.innerText(), /reload/i);
    await shown(page, testId(page, 'nav-requests'), 'the navigation, still there');
    await screenshot(page, 'fixes-01-chunk-failed-dashboard');

    // The request detail is lazy too: the table stays, the detail pane says what failed.
    await page.locator('body').press('1');
    await requestRow(page, plainId).click();
    await shown(page, testId(page, 'load-failed'), 'the message for a detail that could not load', 10_000);
    await shown(page, requestRow(page, plainId), 'the table beside it');
    await screenshot(page, 'fixes-02-chunk-failed-detail');

    // The new build's files are there again: Reload loads them, on the same route, still signed in.
    await page.unroute('**/chunk-*.js');
    await testId(page, 'load-failed-reload').click();
    await shown(page, testId(page, 'request-detail'), 'the request detail after Reload', 10_000);

    // Admin restarting: each chunk fails once, then is served. The one retry loads the page.
    const refused = new Set<string>();
    await page.route('**/chunk-*.js', (route) => {
      const url = route.request().url();
      if (refused.has(url)) return route.continue();
      refused.add(url);
      return route.abort('connectionrefused');
    });
    await page.locator('body').press('3');
    await shown(page, testId(page, 'chart-requests'), 'the Dashboard, loaded on the retry', 10_000);
    assert.ok(refused.size > 0, 'the Dashboard needed a chunk not loaded yet');
    assert.equal(await testId(page, 'load-failed').count(), 0, 'no failure shown');
    await page.unroute('**/chunk-*.js');
    // What this test provoked is not what the last test looks for.
    browser.pageErrors.length = 0;
    browser.failedResponses.length = 0;
  });

  test('a message with <…> text shows it as sent; its markdown still renders and nothing of it runs', async () => {
    const lines = [
      '<instructions>Answer briefly</instructions>',
      '<document index="1">Quarterly report</document>',
      'Compare: if a<b and b>c then x.',
      'Use the <script>alert(1)</script> tag carefully, **this** in bold.',
      '<system-reminder>',
      'Block of tagged text',
      '</system-reminder>',
    ];
    const id = await chat(`${lines.join('\n')}\n(${tag})`);
    await page.goto(`${stack.adminUrl}/#/requests/${id}`);
    const detail = await shown(page, testId(page, 'request-detail'), 'the request detail');
    const user = await shown(page, testId(detail, 'message', '[data-role="user"]'), 'the user message');
    const text = await user.innerText();
    // As sent, but for the markdown: `**this**` shows as a bold "this".
    for (const line of lines.map((l) => l.replace(/\*\*/g, ''))) assert.ok(text.includes(line), `${JSON.stringify(line)} shown as sent in ${JSON.stringify(text)}`);
    assert.deepEqual(await user.locator('strong, b').allInnerTexts(), ['this'], 'only the markdown bold is bold');
    assert.equal(await user.locator('script, instructions, document, system-reminder').count(), 0, 'no tag of the text became an element');
    await screenshot(page, 'fixes-03-tagged-text');
  });

  test('the Model column shows the requested model, which the model filter matches (the answering model on hover); providers by their config name', async () => {
    // The stub answers gpt-4o-mini as gpt-4o-2024-08-06.
    assert.equal((await fetchRecord(stack, plainId)).response_model, 'gpt-4o-2024-08-06');
    await page.goto(`${stack.adminUrl}/#/requests`);
    await shown(page, requestRow(page, plainId), 'the request row');
    assert.equal(await cellText(plainId, 'model'), 'gpt-4o-mini');
    assert.equal(await requestRow(page, plainId).locator('[data-column="model"] [title]').getAttribute('title'), 'answered by gpt-4o-2024-08-06');
    assert.equal(await cellText(plainId, 'provider'), 'openai', 'as the config and the Dashboard name it');

    await setField(page, 'filter-model', 'gpt-4o-mini');
    await until(page, 'the count under the model filter is settled', async () => (await testId(page, 'request-count').innerText()).includes('requests'));
    await shown(page, requestRow(page, plainId), 'the row under a filter of the model it shows');
    await setField(page, 'filter-model', 'gpt-4o-2024');
    await goneFrom(page, requestRow(page, plainId), 'the row under a filter of the answering model');
    await setField(page, 'filter-model', '');
    await setField(page, 'filter-provider', 'openai');
    await shown(page, requestRow(page, plainId), 'the row under a filter of the provider it shows');
    await setField(page, 'filter-provider', '');

    await requestRow(page, plainId).click();
    const fact = (name: string) => testId(page, 'request-detail').locator('.facts > div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${name}$`) }) }).locator('dd');
    await shown(page, fact('Model'), 'the Model fact');
    assert.equal(await fact('Model').innerText(), 'gpt-4o-mini');
    assert.equal(await fact('Answered by').innerText(), 'gpt-4o-2024-08-06');
    assert.equal(await fact('Provider').innerText(), 'openai');
    await screenshot(page, 'fixes-04-model-provider');
    await testId(page, 'detail-close').click();
  });

  test('the property filter finds a property whatever the case of its name (HTTP header names have none)', async () => {
    const id = await chat(`with a property (${tag})`, { 'Svc-Property-Env': `prod-${tag}` });
    assert.deepEqual(Object.entries((await fetchRecord(stack, id)).properties).filter(([k]) => !k.startsWith('svc-')), [['env', `prod-${tag}`]], 'stored under the lower-case name');
    await page.goto(`${stack.adminUrl}/#/requests`);
    await shown(page, requestRow(page, id), 'the row');
    await setField(page, 'filter-property-key', 'Env');
    await setField(page, 'filter-property-value', `prod-${tag}`);
    await goneFrom(page, requestRow(page, plainId), 'a request without the property');
    await shown(page, requestRow(page, id), 'the request with Env as the filter names it');
    await until(page, 'the count is 1', async () => (await testId(page, 'request-count').innerText()).startsWith('1 '));
    await setField(page, 'filter-property-key', '');
    await setField(page, 'filter-property-value', '');
    await shown(page, requestRow(page, plainId), 'every request once the filter is cleared');
  });

  test('a status filter that is no status says so and filters nothing, instead of silently showing every row', async () => {
    await setField(page, 'filter-status', 'foo');
    const hint = await shown(page, testId(page, 'filter-status-hint'), 'the hint for an unknown status');
    assert.match(await hint.innerText(), /200.*4xx.*error/);
    assert.equal(await testId(page, 'filter-status').getAttribute('aria-invalid'), 'true');
    await screenshot(page, 'fixes-05-status-hint');
    await setField(page, 'filter-status', '200');
    await goneFrom(page, testId(page, 'filter-status-hint'), 'the hint once the status is one');
    assert.equal(await testId(page, 'filter-status').getAttribute('aria-invalid'), null);
    await setField(page, 'filter-status', '');
  });

  test('a cost of a fraction of a micro-dollar is written in plain decimals', async () => {
    // The stub's embeddings answer counts 4 tokens: at $0.02 per million, $0.00000008.
    const id = await send('/embeddings', { model: 'openai/text-embedding-3-small', input: `tiny (${tag})` });
    assert.equal((await fetchRecord(stack, id)).cost, 8e-8);
    await shown(page, requestRow(page, id), 'the embeddings row');
    assert.equal(await cellText(id, 'cost'), '$0.00000008');
    for (const [usd, text] of [[8e-8, '$0.00000008'], [1.23456e-9, '$0.0000000012'], [0.00001, '$0.00001'], [0.0084, '$0.0084'], [0.5, '$0.5000'], [12.345, '$12.35'], [0, '$0']] as const) {
      assert.equal(formatCost(usd), text, `formatCost(${usd})`);
    }
  });

  test('the New prompt template has an input the gateway fills in', async () => {
    const name = `template-${tag}`;
    await testId(page, 'nav-prompts').click();
    await (await shown(page, testId(page, 'prompt-new'), 'the New prompt button', 10_000)).click();
    await setField(page, 'prompt-name', name);
    assert.match(await testId(page, 'prompt-input-syntax').innerText(), /\{\{svc:<name>:string\}\}/, 'the editor says how an input is written');
    await screenshot(page, 'fixes-07-new-prompt');
    // Saved as the template comes.
    await testId(page, 'prompt-save').click();
    const row = await shown(page, testId(page, 'prompt-row').filter({ hasText: name }), 'the new prompt');
    const promptId = await row.getAttribute('data-prompt-id');
    assert.ok(promptId);

    await clearStubRequests(stack.stubUrl);
    const question = `What is a gateway? (${tag})`;
    await send('/chat/completions', { prompt_id: promptId, inputs: { question } });
    const upstream = (await stubRequests(stack.stubUrl)).filter((r) => String(r.url).endsWith('/chat/completions'));
    assert.equal(upstream.length, 1);
    const messages = upstream[0]!.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(messages.at(-1), { role: 'user', content: question }, 'the provider got the question, not a placeholder');
  });

  test('a stale error banner on API keys goes once a key is created', async () => {
    await testId(page, 'nav-keys').click();
    await (await shown(page, testId(page, 'key-create'), 'the Create key button')).click();
    await shown(page, testId(page, 'error-banner').filter({ hasText: 'name the key' }), 'the banner asking for a name');
    await setField(page, 'key-name', LONG_KEY_NAME);
    await testId(page, 'key-create').click();
    await shown(page, testId(page, 'key-created'), 'the created key');
    await goneFrom(page, testId(page, 'error-banner'), 'the banner about the name, after a key was created');
  });

  test("the Dashboard's By API key chart cuts a long name at its end, not its start", async () => {
    const key = /sk-svc-[A-Za-z0-9_-]+/.exec(await testId(page, 'key-created').innerText())![0];
    // The proxy learns new keys over the control plane within a second.
    await waitFor(async () => {
      const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `long key (${tag})` }] }),
      });
      await res.arrayBuffer();
      return res.status === 200;
    }, 5_000);
    await testId(page, 'nav-dashboard').click();
    const chart = await shown(page, testId(page, 'chart-by-key'), 'the By API key chart', 10_000);
    await until(page, 'the chart lists both keys', async () => (await chart.evaluate(labelsDrawn)) > 0);
    await page.waitForTimeout(300);
    assert.equal(await chart.evaluate(leftEdgePixels), 0, 'no label runs off the left edge of the chart');
    await screenshot(page, 'fixes-06-dashboard-long-key');
  });

  test('no script failed on the way', () => {
    assert.deepEqual(browser.pageErrors, []);
  });
});

/** A key name longer than the By API key chart's label room. */
const LONG_KEY_NAME = `k${'x'.repeat(100)}-${tag}`;

/** Run in the page: painted pixels of a chart's canvas (0 while nothing is drawn). */
function labelsDrawn(el: Element): number {
  const canvas = el.querySelector('canvas')!;
  const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
  return n;
}

/** Run in the page: painted pixels in the three leftmost columns of a chart's canvas (a label cut at its start reaches them). */
function leftEdgePixels(el: Element): number {
  const canvas = el.querySelector('canvas')!;
  const px = canvas.getContext('2d')!.getImageData(0, 0, 3, canvas.height).data;
  let n = 0;
  for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
  return n;
}
