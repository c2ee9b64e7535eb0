/**
 * End-to-end: the web console (issue 17) in headless Chromium, used as a person uses it. The console
 * is built (scripts/build.ts buildConsole → dist/console/) and served by admin at `/`; the stack is
 * the real one (stub upstream, admin on PostgreSQL, proxy). Every step acts through the page and
 * its `data-testid` attributes; REST and the gateway are only used to make traffic and to check
 * what the page claims. Screenshots of each page go to .screenshots/ (git-ignored).
 * Without chromium installed the suite fails (test/support/browser.ts), it does not skip.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Page } from 'playwright-core';
import { screenshot, type HeadlessBrowser } from './support/browser.ts';
import { goneFrom, requestRow, setField, shown, signIn, testId, until } from './support/console-page.ts';
import { useConsoleStack } from './support/console-stack.ts';
import { uniq, waitFor, type Stack } from './support/stack.ts';

let stack: Stack;
let page: Page;
let browser: HeadlessBrowser;
useConsoleStack((started) => ({ stack, page, browser } = started));
const tag = uniq();

/** Chat through the gateway with the official client; returns the request id (Svc-Id). */
async function chat(model: string, content: string, apiKey = stack.apiKey): Promise<string> {
  const client = new OpenAI({ baseURL: `${stack.gatewayUrl}/ai`, apiKey, maxRetries: 0 });
  const { data, response } = await client.chat.completions
    .create({ model, messages: [{ role: 'user', content }] }, { headers: { 'Svc-User-Id': `console-user-${tag}` } })
    .withResponse();
  assert.equal(data.choices[0]!.message.content, 'The capital of France is Paris.');
  return response.headers.get('svc-id')!;
}

/** The gateway's status for a chat request with `apiKey`. */
async function gatewayStatus(apiKey: string): Promise<number> {
  const res = await fetch(`${stack.gatewayUrl}/ai/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The number in the Requests page's count. */
async function shownCount(): Promise<number> {
  const text = await (await shown(page, testId(page, 'request-count'), 'request count')).innerText();
  const n = Number(/[\d,]+/.exec(text)?.[0]?.replace(/,/g, ''));
  assert.ok(Number.isFinite(n), `request-count ${JSON.stringify(text)} holds a number`);
  return n;
}

describe('the console in a browser', { concurrency: false }, () => {
  let mainId = '';
  let otherId = '';
  const question = `What is the capital of France? (${tag})`;

  test('signing in: a wrong key is refused with a message, the stack key opens the console', async () => {
    await page.goto(`${stack.adminUrl}/`);
    await shown(page, testId(page, 'signin-key'), 'the sign-in form');
    await screenshot(page, '01-signin');
    await setField(page, 'signin-key', 'sk-svc-not-a-real-key-0000000000000000');
    await testId(page, 'signin-submit').click();
    await shown(page, testId(page, 'error-banner'), 'the error banner for a wrong key');
    assert.equal(await testId(page, 'nav-requests').count(), 0, 'no navigation with a wrong key');
    await signIn(page, stack.apiKey);
  });

  test('a chat request made through the gateway appears in Requests without a reload', async () => {
    await testId(page, 'nav-requests').click();
    await shown(page, testId(page, 'request-count'), 'the Requests page');
    // A mark on the window: it survives only if the page is never reloaded.
    await page.evaluate(() => ((window as unknown as { __noReload: string }).__noReload = 'kept'));
    mainId = await chat('openai/gpt-4o-mini', question);
    otherId = await chat('openai/gpt-4.1-nano', `Another question (${tag})`);
    await shown(page, requestRow(page, mainId), `row of request ${mainId}`, 8_000);
    await shown(page, requestRow(page, otherId), `row of request ${otherId}`, 8_000);
    assert.equal(await page.evaluate(() => (window as unknown as { __noReload?: string }).__noReload), 'kept', 'the page was not reloaded');
    assert.ok((await shownCount()) >= 2);
    await screenshot(page, '02-requests');
  });

  test('the model filter keeps the matching request and drops the other', async () => {
    await setField(page, 'filter-model', 'gpt-4o-mini');
    await goneFrom(page, requestRow(page, otherId), 'the gpt-4.1-nano request under the gpt-4o-mini filter');
    await shown(page, requestRow(page, mainId), 'the gpt-4o-mini request under its own filter');
    await setField(page, 'filter-model', 'gpt-4.1-nano');
    await goneFrom(page, requestRow(page, mainId), 'the gpt-4o-mini request under the gpt-4.1-nano filter');
    await shown(page, requestRow(page, otherId), 'the gpt-4.1-nano request under its own filter');
    await until(page, 'the count under the gpt-4.1-nano filter is 1', async () => (await shownCount()) === 1);
    await setField(page, 'filter-model', '');
    await shown(page, requestRow(page, mainId), 'the request once the filter is cleared');
  });

  test('a request opens on its conversation, and its raw JSON is one tab away', async () => {
    await requestRow(page, mainId).click();
    const detail = await shown(page, testId(page, 'request-detail'), 'the request detail');
    await testId(page, 'tab-conversation').click();
    const user = await shown(page, testId(detail, 'message', '[data-role="user"]'), 'the user message');
    assert.ok((await user.innerText()).includes(question), 'the user message is the question asked');
    const answer = await shown(page, testId(detail, 'message', '[data-role="assistant"]'), "the assistant's answer");
    assert.ok((await answer.innerText()).includes('The capital of France is Paris.'));
    await screenshot(page, '03-request-conversation');

    await testId(page, 'tab-request-json').click();
    const raw = await shown(page, testId(page, 'raw-json'), 'the request JSON');
    await until(page, 'the request JSON holds the question', async () => (await raw.innerText()).includes(tag));
    const requestJson = await raw.innerText();
    assert.ok(requestJson.includes('gpt-4o-mini') && requestJson.includes('"messages"'), 'the request body as JSON');
    await screenshot(page, '04-request-json');
    await testId(page, 'tab-response-json').click();
    await until(page, 'the response JSON is the chat.completion', async () => (await testId(page, 'raw-json').first().innerText()).includes('chat.completion'));
    await testId(page, 'detail-close').click();
    await goneFrom(page, testId(page, 'request-detail'), 'the closed detail');
  });

  test('a prompt: created, a second version saved, a version promoted and labelled', async () => {
    const name = `console-prompt-${tag}`;
    await testId(page, 'nav-prompts').click();
    await (await shown(page, testId(page, 'prompt-new'), 'the new-prompt button')).click();
    await setField(page, 'prompt-name', name);
    const body = (text: string) => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'system', content: text }] }, null, 2);
    await setField(page, 'prompt-body', body('You answer in one word.'));
    await testId(page, 'prompt-save').click();
    const row = await shown(page, testId(page, 'prompt-row').filter({ hasText: name }), 'the new prompt in the list');
    const promptId = await row.getAttribute('data-prompt-id');
    assert.ok(promptId, 'prompt-row carries data-prompt-id');
    await row.click();
    await shown(page, testId(page, 'prompt-version'), 'the first version');
    const first = await testId(page, 'prompt-version').count();

    await setField(page, 'prompt-body', body('You answer in two words.'));
    await setField(page, 'prompt-commit-message', 'second');
    await testId(page, 'prompt-save').click();
    await until(page, 'a second version listed after saving', async () => (await testId(page, 'prompt-version').count()) === first + 1);
    const versions = await testId(page, 'prompt-version').evaluateAll((els) => els.map((e) => e.getAttribute('data-version')));
    for (const v of versions) assert.match(v ?? '', /^\d+\.\d+$/, `data-version ${v}`);

    // Promote the newest version to staging (production already names the first).
    const newest = [...versions].sort((a, b) => cmpVersion(b!, a!))[0]!;
    await testId(page, 'prompt-version', `[data-version="${newest}"]`).click();
    await setField(page, 'promote-environment', 'staging');
    await testId(page, 'promote-submit').click();
    await until(page, `the staging label on version ${newest}`, async () => (await testId(page, 'prompt-version', `[data-version="${newest}"]`).innerText()).includes('staging'));
    const res = await fetch(`${stack.adminUrl}/v1/prompt-2025/query/environment-version`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ promptId, environment: 'staging' }),
    });
    assert.equal(res.status, 200, 'staging is set as the page shows');
    const staged = (await res.json()) as { data?: { major_version: number; minor_version: number } } & { major_version?: number; minor_version?: number };
    const v = staged.data ?? staged;
    assert.equal(`${v.major_version}.${v.minor_version}`, newest);

    // The diff of the two versions shows what changed.
    const [older, newer] = [...versions].sort((a, b) => cmpVersion(a!, b!)).slice(-2) as [string, string];
    await setField(page, 'diff-from', older);
    await setField(page, 'diff-to', newer);
    await until(page, 'the diff shows the changed message', async () => /two words/.test(await testId(page, 'prompt-diff').first().innerText()));
    await screenshot(page, '05-prompts');
  });

  test('a dataset made from the current filter lists its request on the Datasets page', async () => {
    const name = `console-dataset-${tag}`;
    await testId(page, 'nav-requests').click();
    await setField(page, 'filter-model', 'gpt-4.1-nano');
    await goneFrom(page, requestRow(page, mainId), 'the gpt-4o-mini request under the gpt-4.1-nano filter');
    await testId(page, 'dataset-from-filter').click();
    await setField(page, 'dataset-name', name);
    await testId(page, 'dataset-create').click();
    await testId(page, 'nav-datasets').click();
    const row = await shown(page, testId(page, 'dataset-row').filter({ hasText: name }), 'the new dataset');
    await row.click();
    await until(page, 'the dataset lists one request', async () => (await testId(page, 'dataset-request-row').count()) === 1);
    assert.equal(await testId(page, 'dataset-request-row').first().getAttribute('data-request-id'), otherId, 'the one request of the filter');
    await screenshot(page, '06-datasets');
    await testId(page, 'nav-requests').click();
    await setField(page, 'filter-model', '');
  });

  test('an API key: shown once at creation, works on the gateway, revoked and then refused', async () => {
    const name = `console-key-${tag}`;
    await testId(page, 'nav-keys').click();
    await setField(page, 'key-name', name);
    await testId(page, 'key-create').click();
    const created = await (await shown(page, testId(page, 'key-created'), 'the created key')).innerText();
    const key = /sk-svc-[A-Za-z0-9_-]+/.exec(created)?.[0];
    assert.ok(key, `the created key is shown: ${JSON.stringify(created)}`);
    await waitFor(async () => (await gatewayStatus(key)) === 200, 1_000, 10);
    await screenshot(page, '07-keys');

    // Shown once: away and back, the key's secret is nowhere on the page.
    await testId(page, 'nav-requests').click();
    await testId(page, 'nav-keys').click();
    const row = await shown(page, testId(page, 'key-row').filter({ hasText: name }), 'the key in the list');
    assert.ok(!(await page.content()).includes(key), 'the key is not shown again');

    const revoked = page.waitForResponse((r) => r.request().method() === 'DELETE' && r.url().includes('/v1/api-keys/'));
    await testId(row, 'key-revoke').click();
    await (await shown(page, testId(row, 'key-revoke-confirm'), 'the revoke confirmation')).click();
    assert.equal((await revoked).status(), 200);
    await goneFrom(page, testId(page, 'key-row').filter({ hasText: name }), 'the revoked key in the list');
    // The proxy holds keys in a cache that admin updates over the control plane: within 1 s.
    await waitFor(async () => (await gatewayStatus(key)) === 401, 1_000, 10);
  });

  test('the Dashboard draws its charts', async () => {
    await testId(page, 'nav-dashboard').click();
    const charts = ['requests', 'errors', 'tokens', 'cost', 'latency', 'ttft', 'by-model', 'by-provider', 'by-key', 'by-user'];
    // Every chart has data from this suite's requests (errors: a count of 0 in each bucket), so
    // each must draw its first series, not only axes, grid and legend.
    for (const c of charts) {
      const chart = await shown(page, testId(page, `chart-${c}`), `chart-${c}`, 10_000);
      await until(page, `chart-${c} draws its series (≥ ${SERIES_PIXELS} pixels of its colour)`, async () => (await chart.evaluate(drawn, SERIES_RGB)) >= SERIES_PIXELS);
    }
    await screenshot(page, '08-dashboard');
  });

  test('signing out returns to the sign-in form, and no script failed on the way', async () => {
    await testId(page, 'signout').click();
    await shown(page, testId(page, 'signin-key'), 'the sign-in form after signing out');
    assert.deepEqual(browser.pageErrors, [], 'no uncaught errors in the page');
    // The wrong key's 401 at sign-in is expected (and Chromium's own ask for a favicon); any other failed call is not.
    const failed = [...new Set(browser.failedResponses)].filter((r) => r !== '401 GET /v1/api-keys' && !r.endsWith(' /favicon.ico'));
    assert.deepEqual(failed, [], 'no failed calls from the page');
  });
});

/** Orders "major.minor" version labels. */
function cmpVersion(a: string, b: string): number {
  const [am, an] = a.split('.').map(Number) as [number, number];
  const [bm, bn] = b.split('.').map(Number) as [number, number];
  return am - bm || an - bn;
}

/** The console's first series colour (#5b9cff, admin/console/components/chart.tsx COLORS[0]). */
const SERIES_RGB: [number, number, number] = [0x5b, 0x9c, 0xff];
/**
 * More pixels of it than a legend's swatch has (~110 at 1400 × 900): a drawn line or bar. A line
 * flat along a 24-hour axis has ~600, a bar thousands.
 */
const SERIES_PIXELS = 300;

/**
 * Run in the page: how much of a chart element's canvas is drawn: -1 when it is blank, else the
 * number of opaque pixels of `rgb`.
 */
function drawn(el: Element, rgb: [number, number, number]): number {
  const canvas = el instanceof HTMLCanvasElement ? el : el.querySelector('canvas');
  if (!canvas || canvas.width === 0 || canvas.height === 0) return -1;
  const blank = document.createElement('canvas');
  blank.width = canvas.width;
  blank.height = canvas.height;
  if (canvas.toDataURL() === blank.toDataURL()) return -1;
  const px = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 0; i < px.length; i += 4) {
    if (Math.abs(px[i]! - rgb[0]) < 8 && Math.abs(px[i + 1]! - rgb[1]) < 8 && Math.abs(px[i + 2]! - rgb[2]) < 8 && px[i + 3]! > 200) n++;
  }
  return n;
}
