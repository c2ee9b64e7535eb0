/**
 * End-to-end: the console's Sessions page in headless Chromium, on the real stack (stub upstream,
 * admin on PostgreSQL, proxy). Requests go through the proxy with `Svc-Session-Id` / `-Path` /
 * `-Name` (one session over three paths with a long unicode name, one with a long unicode id, no
 * name and an error; another organization's requests, one of them in the same session id); the page
 * must list this organization's sessions only, newest last request first, with their figures, open
 * one on its requests in time order with their paths, and open a request in the Requests page's
 * detail. Also: the number-key shortcuts in the new page order, the range select's query, the empty
 * state, and "Load more" past the first page. Every step acts through the page's `data-testid`s;
 * REST is used only to read back what was logged.
 * Run: node --import tsx --test test/console-sessions.test.ts
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { createOrganization } from '../admin/organizations.ts';
import { createApiKey } from '../admin/resources/api-keys/store.ts';
import { formatCost } from '../admin/console/format.ts';
import { screenshot } from './support/browser.ts';
import { goneFrom, shown, signIn, setField, testId, until } from './support/console-page.ts';
import { startConsoleStack, stopConsoleStack, type ConsoleStack } from './support/console-stack.ts';
import { fetchRecord, PROVIDER_KEYS, startLinkedProxy, stopProcess, uniq, type Stack, type Started } from './support/stack.ts';

let consoleStack: ConsoleStack | undefined;
let stack: Stack;
/** A second proxy, linked with the other organization's key (a proxy serves its key's organization). */
let otherProxy: (Started & { url: string }) | undefined;
let page: Page;
const tag = uniq();

before(async () => {
  consoleStack = await startConsoleStack();
  ({ stack, page } = consoleStack);
});
after(async () => {
  await stopProcess(otherProxy);
  await stopConsoleStack(consoleStack);
});

/** One logged chat request: its id and what was sent. */
interface Sent {
  id: string;
  content: string;
  model: string;
}

/**
 * A chat request through the proxy with the session headers given (values may be unicode: sent as
 * their UTF-8 bytes, which the proxy reads back as UTF-8). Waits until admin stored it.
 */
async function send(session: { id: string; path?: string; name?: string }, model: string, content: string, expectStatus = 200, apiKey = stack.apiKey, gatewayUrl = stack.gatewayUrl): Promise<Sent> {
  const utf8 = (v: string) => Buffer.from(v, 'utf8').toString('latin1');
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'svc-session-id': utf8(session.id) };
  if (session.path) headers['svc-session-path'] = utf8(session.path);
  if (session.name) headers['svc-session-name'] = utf8(session.name);
  const res = await fetch(`${gatewayUrl}/ai/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model, messages: [{ role: 'user', content }] }) });
  const text = await res.text();
  assert.equal(res.status, expectStatus, text.slice(0, 300));
  const id = res.headers.get('svc-id');
  assert.ok(id, 'the proxy names the request (Svc-Id)');
  await fetchRecord({ adminUrl: stack.adminUrl, apiKey }, id);
  // Distinct, ordered creation times: the session's timeline order is what is checked.
  await new Promise((r) => setTimeout(r, 15));
  return { id, content, model };
}

/** Sums a member of logged requests as REST shows them. */
async function sumOf(ids: string[], member: 'total_tokens' | 'cost'): Promise<number> {
  let sum = 0;
  for (const id of ids) sum += Number((await fetchRecord(stack, id))[member] ?? 0);
  return sum;
}

/** The digits of a cell's text (`1,234 ` → `1234`), so the check does not depend on the locale. */
async function digits(loc: Locator): Promise<string> {
  return (await loc.innerText()).replace(/\D/g, '');
}

const sessionRow = (id: string) => testId(page, 'session-row', `[data-session-id="${cssString(id)}"]`);
/** `s` as the inside of a double-quoted CSS attribute value. */
function cssString(s: string): string {
  return s.replace(/["\\]/g, (c) => `\\${c}`);
}
const listedSessions = () => testId(page, 'session-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-session-id')));
const listedRequests = () => testId(page, 'session-request-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-request-id')));

describe('the Sessions page in a browser', { concurrency: false }, () => {
  // A: three requests along one trace; its name is long and not ASCII.
  const a = { id: `trip-${tag}`, name: `Reise ✈ 東京 → Zürich — ${tag} ${'sehr lange Bezeichnung '.repeat(8)}`.trim() };
  // B: no name, a long unbroken id with an emoji; one request answered 400.
  const b = { id: `solo-🚀-${tag}-${'x'.repeat(160)}` };
  const other = { id: `other-org-${tag}` };
  const sentA: Sent[] = [];
  const sentB: Sent[] = [];

  test('signed in with no session yet: key 2 opens Sessions, which says it has none', async () => {
    await page.goto(`${stack.adminUrl}/`);
    await signIn(page, stack.apiKey);
    const nav = await shown(page, testId(page, 'nav-sessions'), 'the Sessions link');
    assert.equal((await nav.innerText()).replace(/\s+/g, ' ').trim(), 'Sessions 2', 'second in the nav, shortcut 2');
    // The shortcuts follow the nav order: Sessions took 2, the Dashboard moved to 3.
    for (const [key, hash] of [['2', '#/sessions'], ['3', '#/dashboard'], ['1', '#/requests'], ['2', '#/sessions']] as const) {
      await page.locator('body').press(key);
      await until(page, `key ${key} opens ${hash}`, async () => (await page.evaluate(() => window.location.hash)) === hash);
    }
    // The hash changes before React renders the route, so the mark is waited for, not read at once.
    await until(page, 'the Sessions link marked active', async () => /\bactive\b/.test((await testId(page, 'nav-sessions').getAttribute('class')) ?? ''));
    await shown(page, testId(page, 'sessions-empty'), 'the empty state');
    assert.equal(await testId(page, 'session-row').count(), 0);
    await screenshot(page, 'sessions-01-empty');
  });

  test("the organization's sessions are listed newest first with their figures; another organization's are not", async () => {
    sentA.push(await send({ ...a, path: '/plan' }, 'openai/gpt-4o-mini', `Plan a trip (${tag})`));
    sentA.push(await send({ ...a, path: '/plan/search' }, 'openai/gpt-4.1-nano', `Search flights (${tag})`));
    sentB.push(await send({ ...b, path: '/solo' }, 'openai/gpt-4o-mini', `Alone (${tag})`));
    sentB.push(await send({ ...b, path: '/solo/retry' }, 'openai/error-400', `Too long (${tag})`, 400));
    sentA.push(await send({ ...a, path: '/plan/search/answer' }, 'openai/gpt-4o-mini', `Write the answer (${tag})`));

    // Another organization: its own session, and one request under A's id, which must not count in A.
    const org = await createOrganization(stack.db.sql, `other-${tag}`);
    const otherKey = (await createApiKey(stack.db.sql, org, 'other')).key;
    otherProxy = await startLinkedProxy({ adminPort: stack.admin.port, apiKey: otherKey, configFile: stack.configFile, env: PROVIDER_KEYS });
    await send({ ...other, path: '/elsewhere', name: `Other organization ${tag}` }, 'openai/gpt-4o-mini', `other organization (${tag})`, 200, otherKey, otherProxy.url);
    await send({ ...a, path: '/plan' }, 'openai/gpt-4o-mini', `foreign (${tag})`, 200, otherKey, otherProxy.url);
    await stopProcess(otherProxy);

    // The page opened before these requests: Refresh reads the list again.
    await testId(page, 'session-refresh').click();
    await until(page, 'two sessions listed', async () => (await testId(page, 'session-row').count()) === 2);
    assert.deepEqual(await listedSessions(), [a.id, b.id], "A's last request is the newest; the other organization's session is absent");
    assert.equal(await sessionRow(other.id).count(), 0);
    assert.equal((await testId(page, 'session-count').innerText()).trim(), '2 sessions');
    await goneFrom(page, testId(page, 'sessions-empty'), 'the empty state');

    const rowA = sessionRow(a.id);
    assert.equal(await testId(rowA, 'session-name').innerText(), a.name, 'the unicode name, whole in the DOM');
    assert.equal(await digits(testId(rowA, 'session-requests')), '3', "three requests: the other organization's one is not counted");
    assert.equal(await digits(testId(rowA, 'session-tokens')), String(await sumOf(sentA.map((s) => s.id), 'total_tokens')));
    assert.ok(Number(await digits(testId(rowA, 'session-tokens'))) > 0, 'the stub reports usage');
    assert.equal(await testId(rowA, 'session-cost').innerText(), formatCost(await sumOf(sentA.map((s) => s.id), 'cost')));
    assert.equal(await digits(testId(rowA, 'session-errors')), '0');

    const rowB = sessionRow(b.id);
    assert.equal(await testId(rowB, 'session-name').innerText(), b.id, 'no name: the id stands in');
    assert.equal(await digits(testId(rowB, 'session-requests')), '2');
    assert.equal(await digits(testId(rowB, 'session-errors')), '1', 'the 400 counts as an error');
    assert.equal(await testId(rowB, 'session-cost').innerText(), formatCost(await sumOf(sentB.map((s) => s.id), 'cost')));

    // Long names and ids are cut with an ellipsis inside the table: nothing scrolls sideways.
    const overflow = await page.evaluate(() => {
      const list = document.querySelector('.sessions-list')!;
      return { page: document.documentElement.scrollWidth - window.innerWidth, list: list.scrollWidth - list.clientWidth };
    });
    assert.deepEqual(overflow, { page: 0, list: 0 }, 'no horizontal overflow');
    await screenshot(page, 'sessions-02-list');
  });

  test('the range select asks for that range: its start for "last 1h", no bound for "all time"', async () => {
    const body = async (value: string) => {
      const asked = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v1/session/query');
      await setField(page, 'session-range', value);
      return JSON.parse((await asked).postData() ?? '{}') as { timeFilter?: { startTimeUnixMs: number; endTimeUnixMs: number }; offset: number; limit: number };
    };
    const hour = await body('1h');
    assert.ok(hour.timeFilter, 'a time filter for the last hour');
    assert.ok(Math.abs(hour.timeFilter.startTimeUnixMs - (Date.now() - 3_600_000)) < 60_000, `start ${hour.timeFilter.startTimeUnixMs} is an hour ago`);
    assert.ok(hour.timeFilter.endTimeUnixMs > Date.now() + 86_400_000, 'the end leaves the range open');
    assert.equal(hour.offset, 0);
    await until(page, 'both sessions in the last hour', async () => JSON.stringify(await listedSessions()) === JSON.stringify([a.id, b.id]));
    const all = await body('all');
    assert.equal(all.timeFilter, undefined, 'all time: no time filter');
    await until(page, 'both sessions of all time', async () => JSON.stringify(await listedSessions()) === JSON.stringify([a.id, b.id]));
    await setField(page, 'session-range', '24h');
  });

  test('a session opens on its figures and its requests in time order, with their paths', async () => {
    await sessionRow(a.id).click();
    await until(page, 'the route names session A', async () => (await page.evaluate(() => window.location.hash)) === `#/sessions/${encodeURIComponent(a.id)}`);
    const detail = await shown(page, testId(page, 'session-detail'), 'the session detail');
    await until(page, "A's three requests listed", async () => (await testId(detail, 'session-request-row').count()) === 3);
    assert.equal(await testId(detail, 'session-title').innerText(), a.name);
    assert.equal(await digits(testId(detail, 'session-stat-requests')), '3');
    assert.equal(await digits(testId(detail, 'session-stat-errors')), '0');
    assert.equal(await digits(testId(detail, 'session-stat-tokens')), String(await sumOf(sentA.map((s) => s.id), 'total_tokens')));
    assert.ok((await testId(detail, 'session-stat-cost').innerText()).includes(formatCost(await sumOf(sentA.map((s) => s.id), 'cost'))));

    assert.deepEqual(await listedRequests(), sentA.map((s) => s.id), 'in the order they were sent');
    const paths = await testId(detail, 'session-request-path').allInnerTexts();
    assert.deepEqual(paths.map((p) => p.trim()), ['/plan', '/plan/search', '/plan/search/answer']);
    const indents = await testId(detail, 'session-request-path').evaluateAll((els) => els.map((e) => parseFloat(getComputedStyle(e).paddingLeft)));
    assert.ok(indents[0]! < indents[1]! && indents[1]! < indents[2]!, `indented by depth: ${indents.join(', ')}`);
    assert.deepEqual((await testId(detail, 'session-request-status').allInnerTexts()).map((s) => s.trim()), ['200', '200', '200']);
    const models = await testId(detail, 'session-request-model').allInnerTexts();
    sentA.forEach((s, i) => assert.ok(models[i]!.includes(s.model.replace('openai/', '')), `row ${i + 1} model ${models[i]} is ${s.model}`));
    // The page is still not wider than the window with the detail beside the list.
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), 0);
    await screenshot(page, 'sessions-03-detail');

    // B, opened from the narrowed list: its error shows in its figures and its row.
    await sessionRow(b.id).click();
    await until(page, "B's requests listed", async () => JSON.stringify(await listedRequests()) === JSON.stringify(sentB.map((s) => s.id)));
    assert.equal(await testId(detail, 'session-title').innerText(), b.id);
    assert.equal(await digits(testId(detail, 'session-stat-errors')), '1');
    const statuses = testId(detail, 'session-request-status');
    assert.equal((await statuses.nth(1).innerText()).trim(), '400');
    assert.match((await statuses.nth(1).getAttribute('class')) ?? '', /\bwarn\b|\berr\b/);
    assert.deepEqual((await testId(detail, 'session-request-path').allInnerTexts()).map((p) => p.trim()), ['/solo', '/solo/retry']);

    await testId(page, 'session-close').click();
    await goneFrom(page, testId(page, 'session-detail'), 'the closed session');
    assert.equal(await page.evaluate(() => window.location.hash), '#/sessions');
  });

  test("a session's request opens in the request detail, and Back returns to the session", async () => {
    await sessionRow(a.id).click();
    const second = sentA[1]!;
    await (await shown(page, testId(page, 'session-request-row', `[data-request-id="${second.id}"]`), 'the second request of A')).click();
    await until(page, 'the route names the request', async () => (await page.evaluate(() => window.location.hash)) === `#/requests/${second.id}`);
    const detail = await shown(page, testId(page, 'request-detail'), 'the request detail');
    assert.equal(await detail.locator('.detail-head code').first().innerText(), second.id);
    const user = await shown(page, testId(detail, 'message', '[data-role="user"]'), 'the user message');
    assert.ok((await user.innerText()).includes(second.content), 'the request sent as /plan/search');
    await screenshot(page, 'sessions-04-request');

    await page.goBack();
    await shown(page, testId(page, 'session-detail'), 'the session again after Back');
    await until(page, "A's requests again", async () => JSON.stringify(await listedRequests()) === JSON.stringify(sentA.map((s) => s.id)));
  });

  test('past the first page, "Load more" lists the rest once', async () => {
    // 49 more sessions: with A and B, one more than the page of 50.
    const fillers = Array.from({ length: 49 }, (_, i) => `fill-${tag}-${String(i).padStart(2, '0')}`);
    for (let i = 0; i < fillers.length; i += 7) {
      await Promise.all(fillers.slice(i, i + 7).map((id) => send({ id, path: '/step' }, 'openai/gpt-4o-mini', `filler (${tag})`)));
    }
    await testId(page, 'nav-sessions').click();
    await testId(page, 'session-refresh').click();
    await until(page, 'the first page of 50', async () => (await testId(page, 'session-row').count()) === 50);
    assert.equal((await testId(page, 'session-count').innerText()).trim(), '50+ sessions');
    assert.equal(await sessionRow(b.id).count(), 0, "B's last request is the oldest: on the second page");
    await (await shown(page, testId(page, 'session-load-more'), 'Load more')).click();
    await until(page, 'all 51 sessions', async () => (await testId(page, 'session-row').count()) === 51);
    const ids = await listedSessions();
    assert.equal(new Set(ids).size, 51, 'no session twice');
    assert.equal(ids[50], b.id, 'B last');
    assert.equal((await testId(page, 'session-count').innerText()).trim(), '51 sessions');
    await goneFrom(page, testId(page, 'session-load-more'), 'Load more after the last page');
    assert.equal(await sessionRow(other.id).count(), 0);
  });

  test('no script failed and the page made no failing call', async () => {
    assert.deepEqual(consoleStack!.browser.pageErrors, [], 'no uncaught errors in the page');
    assert.deepEqual([...new Set(consoleStack!.browser.failedResponses)].filter((r) => !r.endsWith(' /favicon.ico')), [], 'no failed calls from the page');
  });
});
