/**
 * What every console test starts from: the console built (scripts/build.ts buildConsole →
 * dist/console/), the real stack (./stack.ts: stub upstream, admin on PostgreSQL, proxy) and a
 * headless Chromium page (./browser.ts; without chromium this fails, it does not skip).
 */
import { after, before } from 'node:test';
import type { Page } from 'playwright-core';
import { buildConsole } from '../../scripts/build.ts';
import { launchBrowser, type HeadlessBrowser } from './browser.ts';
import { startStack, type Stack } from './stack.ts';

/** A running stack and a browser page to drive its console. */
export interface ConsoleStack {
  stack: Stack;
  browser: HeadlessBrowser;
  page: Page;
}

/**
 * Builds the console, starts the stack and the browser.
 * @throws what failed; the stack is stopped first when the browser is what failed.
 */
export async function startConsoleStack(): Promise<ConsoleStack> {
  await buildConsole();
  const stack = await startStack();
  let browser: HeadlessBrowser;
  try {
    browser = await launchBrowser();
  } catch (err) {
    await stack.stop();
    throw err;
  }
  // A step that cannot find its element fails in 10 s, not playwright's 30.
  browser.page.setDefaultTimeout(10_000);
  return { stack, browser, page: browser.page };
}

/** Closes the browser, then stops the stack (either may be missing when the start failed). */
export async function stopConsoleStack(c: Partial<ConsoleStack> | undefined): Promise<void> {
  await c?.browser?.close();
  await c?.stack?.stop();
}

/**
 * Registers the calling test file's `before` and `after`: the console stack started ({@link startConsoleStack}) and
 * handed to `onStarted` (for the file to keep its `stack`, `page` or `browser`), then stopped ({@link stopConsoleStack}).
 */
export function useConsoleStack(onStarted: (started: ConsoleStack) => void): void {
  let started: ConsoleStack | undefined;
  before(async () => {
    started = await startConsoleStack();
    onStarted(started);
  });
  after(() => stopConsoleStack(started));
}
