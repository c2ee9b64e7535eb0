/**
 * Headless Chromium for the console's browser tests and the console bench: Debian's `chromium`
 * package (installed by apt; .ci/run installs it when missing) driven by playwright-core, which
 * brings no browser of its own. Each launch gets a fresh user-data directory, removed on close.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/**
 * Chromium's flags: headless without a GPU or sandbox (tests run as root in containers), and none of
 * its background traffic (updates, sync, QUIC probes), which would reach out of the machine.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-quic',
  '--no-first-run',
  '--disable-sync',
];

/** Where the browser tests save their screenshots (git-ignored). */
export const SCREENSHOT_DIR = fileURLToPath(new URL('../../.screenshots/', import.meta.url));

/**
 * The path of the `chromium` executable on PATH (what `which chromium` prints).
 * @throws with how to install it when there is none: a browser test fails then, it never skips.
 */
export function chromiumPath(): string {
  let found = '';
  try {
    found = execFileSync('which', ['chromium'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    /* `which` exits 1 when nothing is found: reported below */
  }
  if (!found) {
    throw new Error("chromium is not installed: the browser tests need Debian's chromium package (apt-get update && apt-get install -y chromium; .ci/run does this)");
  }
  return found;
}

/** A launched browser: one context (fresh profile) and its first page. */
export interface HeadlessBrowser {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page's scripts and `console.error` lines (but Chromium's own line for a failed load). */
  pageErrors: string[];
  /** Every answer of status ≥ 400 the page received, as `<status> <method> <path>`. */
  failedResponses: string[];
  /** Closes the browser and removes its user-data directory. */
  close(): Promise<void>;
}

/**
 * Launches headless Chromium with {@link CHROMIUM_ARGS} on a fresh user-data directory.
 * @param viewport the page size (default 1400 × 900, wide enough for the console's tables).
 */
export async function launchBrowser(viewport = { width: 1400, height: 900 }): Promise<HeadlessBrowser> {
  const executablePath = chromiumPath();
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'svc-chromium-'));
  let context: BrowserContext;
  try {
    // A persistent context is how playwright takes a user-data directory of ours (it refuses
    // --user-data-dir in args); the directory is new, so nothing persists between launches.
    context = await chromium.launchPersistentContext(userDataDir, { executablePath, headless: true, args: [...CHROMIUM_ARGS], viewport });
  } catch (err) {
    rmSync(userDataDir, { recursive: true, force: true });
    throw new Error(`chromium (${executablePath}) did not start: ${(err as Error).message}`);
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  const failedResponses: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
  page.on('console', (m) => {
    // Chromium logs "Failed to load resource" without the URL: failedResponses has it.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) pageErrors.push(`console.error: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) failedResponses.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
  });
  return {
    context,
    page,
    pageErrors,
    failedResponses,
    async close() {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot of `page` as `<SCREENSHOT_DIR>/<name>.png` and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
