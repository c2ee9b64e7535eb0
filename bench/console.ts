/**
 * The `console` bench scenario (issue 17's target: a page of the Requests table appears within 1 s
 * on a log of one million rows). A scratch PostgreSQL database gets `rows` request_log rows of one
 * organization (generate_series, spread over the last 20 hours, so the console's default 24-hour
 * range holds all of them); admin serves the built console on it; headless Chromium (Debian's, via
 * playwright-core: test/support/browser.ts) then measures, with the key already in sessionStorage:
 *
 * - first page: navigation to the Requests page → its first rows shown (the page's own clock,
 *   `performance.now()` from the navigation's start, read on the first animation frame that shows
 *   a `request-row`), after one warm-up load, the median of `loads` loads;
 * - keyset page: scrolling to the last row → more rows shown (the next page, fetched with `before`),
 *   the median of `pages` pages;
 * - the `POST /v1/request/query` calls the page made, as Chromium timed them;
 * - over REST alone: a keyset page near the log's end, and `POST /v1/request/count` of all rows.
 */
import type { Page } from 'playwright-core';
import type { Sql } from '../admin/db.ts';
import { buildConsole } from '../scripts/build.ts';
import { generateApiKey } from '../shared/apikey.ts';
import { launchBrowser } from '../test/support/browser.ts';
import { shown, signIn, testId } from '../test/support/console-page.ts';
import { createTestDatabase } from '../test/support/db.ts';
import { median, round, startProcess, stopAll, table, writeConfig, type Started } from './lib.ts';

/** What the scenario is given: the number of rows, loads and scroll pages. */
export interface ConsoleBenchOptions {
  rows: number;
  loads: number;
  pages: number;
}

/** The scenario's result, in bench/run.ts's ScenarioResult shape. */
export interface ConsoleBenchResult {
  scenario: string;
  description: string;
  summary: Record<string, unknown>;
  checks: Array<{ scenario: string; target: string; measured: string; met: boolean }>;
  detail: Record<string, unknown>;
}

/** The target for either measurement (ms). */
const TARGET_MS = 1_000;
const BATCH = 100_000;
const SPAN_MS = 20 * 3600 * 1000;

/**
 * Fills request_log with `rows` rows of `org` (key `keyId`), newest now, `SPAN_MS` apart in all:
 * three models, a thousand users, 2 % errors, small chat bodies like the gateway's records.
 */
async function loadRows(sql: Sql, org: string, keyId: string, rows: number): Promise<number> {
  const started = performance.now();
  const stepMs = SPAN_MS / rows;
  for (let from = 1; from <= rows; from += BATCH) {
    const to = Math.min(rows, from + BATCH - 1);
    await sql.unsafe(
      `insert into request_log (id, organization_id, api_key_id, created_at, response_created_at, path, target_url, provider,
         request_model, response_model, user_id, properties, status, streamed, delay_ms, time_to_first_token,
         prompt_tokens, completion_tokens, total_tokens, tokens_source, cost_usd, prompt_text, request_body, response_body)
       select gen_random_uuid(), $1::uuid, $2::uuid, t, t + (300 + i % 700) * interval '1 millisecond', '/ai/chat/completions',
         'http://127.0.0.1:9/v1/chat/completions', 'OPENAI', m, m || '-2024-08-06', 'user-' || (i % 1000),
         jsonb_build_object('env', case when i % 2 = 0 then 'prod' else 'dev' end),
         case when i % 50 = 0 then 500 else 200 end, i % 4 = 0, 300 + i % 700, 100 + i % 200,
         20 + i % 100, 5 + i % 50, 25 + i % 100 + i % 50, 'provider', 0.00001 * (1 + i % 7), 'Question number ' || i,
         jsonb_build_object('model', 'openai/' || m, 'messages', jsonb_build_array(jsonb_build_object('role', 'user', 'content', 'Question number ' || i))),
         jsonb_build_object('object', 'chat.completion', 'model', m, 'choices', jsonb_build_array(jsonb_build_object('index', 0,
           'message', jsonb_build_object('role', 'assistant', 'content', 'Answer number ' || i), 'finish_reason', 'stop')))
       from (select i, now() - (i * $3::double precision) * interval '1 millisecond' as t,
                    (array['gpt-4o-mini', 'gpt-4.1-nano', 'claude-sonnet-4-5'])[1 + i % 3] as m
             from generate_series($4::int, $5::int) as i) g`,
      [org, keyId, stepMs, from, to],
    );
    process.stdout.write(`  loaded ${to.toLocaleString('en')} of ${rows.toLocaleString('en')} rows\r`);
  }
  await sql.unsafe('vacuum analyze request_log');
  process.stdout.write('\n');
  return performance.now() - started;
}

/** Where one load's time went, each from the navigation's start (ms, the page's clock). */
export interface LoadTiming {
  /** The first `request-row` shown. */
  rows: number;
  /** DOMContentLoaded ended (the document and its script are in). */
  domContentLoaded: number;
  /** The first `POST /v1/request/query` sent, and its answer read (resource timing). */
  queryStart: number | null;
  queryEnd: number | null;
}

/**
 * Reloads the page (on the Requests route) and times it (see {@link LoadTiming}). A reload, not a
 * goto: going to the URL the tab is on would be a same-document hash navigation, and the key
 * stays in sessionStorage either way.
 */
async function firstRows(page: Page): Promise<LoadTiming> {
  await page.reload({ waitUntil: 'commit' });
  const handle = await page.waitForFunction(() => (document.querySelector('[data-testid="request-row"]') ? performance.now() : 0), undefined, {
    polling: 'raf',
    timeout: 30_000,
  });
  const rows = (await handle.jsonValue()) as number;
  return page.evaluate((shownAt) => {
    const nav = window.performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined;
    const query = (window.performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((e) => e.name.endsWith('/v1/request/query'));
    return { rows: shownAt, domContentLoaded: nav?.domContentLoadedEventEnd ?? 0, queryStart: query?.startTime ?? null, queryEnd: query?.responseEnd ?? null };
  }, rows);
}

/**
 * Scrolls the Requests table to its end and returns the time until it holds more rows (ms). The
 * table is virtualized (only the rows in view are in the DOM), so rows are counted by the
 * table's `aria-rowcount`, and the scroll goes to the rows' scrolling ancestor.
 */
async function nextPage(page: Page): Promise<{ ms: number; rows: number }> {
  const rowCount = () => Number(document.querySelector('[data-testid="request-row"]')?.closest('[role="table"]')?.getAttribute('aria-rowcount') ?? NaN);
  const before = await page.evaluate(rowCount);
  if (!Number.isFinite(before)) throw new Error('the Requests table has no aria-rowcount to count its loaded rows by');
  const t0 = await page.evaluate(() => {
    let el = document.querySelector('[data-testid="request-row"]')?.parentElement ?? null;
    while (el && !(el.scrollHeight > el.clientHeight && /auto|scroll/.test(getComputedStyle(el).overflowY))) el = el.parentElement;
    const t = performance.now();
    (el ?? document.scrollingElement!).scrollTop = (el ?? document.scrollingElement!).scrollHeight;
    return t;
  });
  const handle = await page.waitForFunction(
    (n) => {
      const count = Number(document.querySelector('[data-testid="request-row"]')?.closest('[role="table"]')?.getAttribute('aria-rowcount') ?? 0);
      return count > n ? [performance.now(), count] : null;
    },
    before,
    { polling: 'raf', timeout: 30_000 },
  );
  const [t1, rows] = (await handle.jsonValue()) as [number, number];
  return { ms: t1 - t0, rows };
}

/** Times `runs` calls of `POST <adminUrl><path>` with `body` (ms each), checking each answers 200. */
async function timePosts(adminUrl: string, apiKey: string, path: string, body: unknown, runs: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await fetch(`${adminUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await res.text();
    out.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text.slice(0, 300)}`);
  }
  return out;
}

/** Runs the scenario (see the file's comment). */
export async function consoleScenario(o: ConsoleBenchOptions): Promise<ConsoleBenchResult> {
  const name = 'console';
  const db = await createTestDatabase();
  const apiKey = generateApiKey();
  let admin: Started | null = null;
  let browser: Awaited<ReturnType<typeof launchBrowser>> | null = null;
  try {
    await buildConsole();
    const configFile = writeConfig({ svc: { features: 'observability' } });
    admin = await startProcess('admin/main.ts', { DATABASE_URL: db.url, ADMIN_PORT: '0', SVC_BOOTSTRAP_API_KEY: apiKey }, 'admin.ready', ['--config', configFile]);
    const adminUrl = `http://127.0.0.1:${admin.port}`;
    const [key] = await db.sql<Array<{ id: string; organization_id: string }>>`select id, organization_id from api_key limit 1`;
    const loadMs = await loadRows(db.sql, key!.organization_id, key!.id, o.rows);
    const [{ bytes }] = (await db.sql`select pg_total_relation_size('request_log')::bigint as bytes`) as unknown as [{ bytes: string }];

    browser = await launchBrowser();
    const page = browser.page;
    const queries: number[] = [];
    page.on('requestfinished', (r) => {
      if (r.method() === 'POST' && r.url().endsWith('/v1/request/query')) queries.push(r.timing().responseEnd);
    });
    await page.goto(`${adminUrl}/`);
    await signIn(page, apiKey, 30_000);
    await testId(page, 'nav-requests').click();
    await shown(page, testId(page, 'request-row'), 'the first Requests rows', 30_000);

    await firstRows(page); // warm-up: the bundle cached, PostgreSQL's pages read once
    const timings: LoadTiming[] = [];
    for (let i = 0; i < o.loads; i++) timings.push(await firstRows(page));
    const loads = timings.map((t) => t.rows);
    const mid = (f: (t: LoadTiming) => number | null) => round(median(timings.map(f).filter((x): x is number => x !== null)), 0);
    const pageRows = Number(await page.locator('[role="table"]').first().getAttribute('aria-rowcount'));
    const pages: Array<{ ms: number; rows: number }> = [];
    for (let i = 0; i < o.pages; i++) pages.push(await nextPage(page));

    // Over REST, without the browser: a keyset page near the end of the log (the index serves any
    // depth), and the count the page shows beside the rows (it does not hold the rows back).
    const [deep] = await db.sql<Array<{ created_at: Date; id: string }>>`
      select created_at, id from request_log order by created_at desc, id desc offset ${Math.max(0, o.rows - 500)} limit 1`;
    const before = { created_at: deep!.created_at.toISOString(), request_id: deep!.id };
    const deepPage = await timePosts(adminUrl, apiKey, '/v1/request/query', { filter: 'all', limit: 200, before }, 5);
    const count = await timePosts(adminUrl, apiKey, '/v1/request/count', { filter: 'all' }, 3);

    const first = median(loads);
    const keyset = median(pages.map((p) => p.ms));
    console.log(
      table(
        ['measure', 'median ms', 'min', 'max', 'n'],
        [
          ['navigation → first Requests rows', round(first, 0), round(Math.min(...loads), 0), round(Math.max(...loads), 0), loads.length],
          ['scroll → next keyset page shown', round(keyset, 0), round(Math.min(...pages.map((p) => p.ms)), 0), round(Math.max(...pages.map((p) => p.ms)), 0), pages.length],
          ['POST /v1/request/query (Chromium timing)', round(median(queries), 0), round(Math.min(...queries), 0), round(Math.max(...queries), 0), queries.length],
          [`REST: keyset page at row ${Math.max(0, o.rows - 500).toLocaleString('en')}`, round(median(deepPage), 0), round(Math.min(...deepPage), 0), round(Math.max(...deepPage), 0), deepPage.length],
          ['REST: POST /v1/request/count of all rows', round(median(count), 0), round(Math.min(...count), 0), round(Math.max(...count), 0), count.length],
        ],
      ),
    );
    console.log(
      `first page, medians from the navigation's start: DOMContentLoaded ${mid((t) => t.domContentLoaded)} ms, ` +
        `first query sent ${mid((t) => t.queryStart)} ms, answered ${mid((t) => t.queryEnd)} ms, rows shown ${mid((t) => t.rows)} ms`,
    );
    console.log(`${o.rows.toLocaleString('en')} rows loaded in ${Math.round(loadMs / 1000)} s (request_log ${Math.round(Number(bytes) / 2 ** 20)} MiB); ${pageRows} rows a page; rows after scrolling: ${pages.map((p) => p.rows).join(', ')}`);
    return {
      scenario: name,
      description: `Requests page of the console on ${o.rows.toLocaleString('en')} request_log rows: first page and keyset page in headless Chromium`,
      summary: { rows: o.rows, firstPageMs: round(first, 0), keysetPageMs: round(keyset, 0), queryMs: round(median(queries), 0), deepKeysetPageMs: round(median(deepPage), 0), countMs: round(median(count), 0), pageRows },
      checks: [
        { scenario: name, target: `Requests page shown ≤ ${TARGET_MS} ms on ${o.rows.toLocaleString('en')} rows (median)`, measured: `${Math.round(first)} ms`, met: first <= TARGET_MS },
        { scenario: name, target: `keyset page (scroll) shown ≤ ${TARGET_MS} ms (median)`, measured: `${Math.round(keyset)} ms`, met: keyset <= TARGET_MS },
      ],
      detail: { timings, pages, queries, deepPage, count, loadMs, tableBytes: Number(bytes), pageErrors: browser.pageErrors },
    };
  } finally {
    await browser?.close();
    await stopAll(admin);
    await db.drop();
  }
}
