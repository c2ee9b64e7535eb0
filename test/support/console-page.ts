/**
 * Driving the web console (admin/console/, served at `/` of admin) the way a person does, by the
 * `data-testid` attributes it carries: used by test/e2e-console.test.ts and the console bench.
 */
import type { Locator, Page } from 'playwright-core';

/** The element(s) with `data-testid="<id>"`, optionally narrowed by more attribute selectors (`[data-role="user"]`). */
export function testId(page: Page | Locator, id: string, attrs = ''): Locator {
  return page.locator(`[data-testid="${id}"]${attrs}`);
}

/**
 * Waits until the first element of `loc` is visible.
 * @throws naming `what`, with the page's error banner when it shows one (the likely cause).
 */
export async function shown(page: Page, loc: Locator, what: string, timeoutMs = 5_000): Promise<Locator> {
  try {
    await loc.first().waitFor({ state: 'visible', timeout: timeoutMs });
  } catch {
    throw new Error(`${what}: not shown within ${timeoutMs} ms${await bannerText(page)}`);
  }
  return loc.first();
}

/** Waits until no element of `loc` is visible (removed or hidden). */
export async function goneFrom(page: Page, loc: Locator, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await loc.count()) === 0 || !(await loc.first().isVisible())) return;
    await page.waitForTimeout(50);
  }
  throw new Error(`${what}: still shown after ${timeoutMs} ms${await bannerText(page)}`);
}

/**
 * Polls `check` until it is true.
 * @throws naming `what`, with the page's error banner when it shows one.
 */
export async function until(page: Page, what: string, check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await page.waitForTimeout(25);
  }
  throw new Error(`${what}: not so within ${timeoutMs} ms${await bannerText(page)}`);
}

/** The error banner's text, as a suffix for failure messages ('' when there is none). */
async function bannerText(page: Page): Promise<string> {
  const banner = testId(page, 'error-banner');
  if ((await banner.count()) === 0) return '';
  return ` (error banner: ${JSON.stringify((await banner.first().innerText().catch(() => '')).slice(0, 300))})`;
}

/**
 * Sets a form field by its test id: a `<select>` gets the option whose value (else label) is `value`,
 * any other field is typed into (replacing what it held).
 */
export async function setField(page: Page, id: string, value: string): Promise<void> {
  const field = await shown(page, testId(page, id), id);
  const tag = await field.evaluate((el) => el.tagName);
  if (tag === 'SELECT') {
    const values = await field.evaluate((el) => [...(el as HTMLSelectElement).options].map((o) => ({ value: o.value, label: o.label })));
    const option = values.find((o) => o.value === value) ?? values.find((o) => o.label === value);
    if (!option) throw new Error(`${id}: no option ${JSON.stringify(value)} among ${JSON.stringify(values)}`);
    await field.selectOption(option.value);
  } else {
    await field.fill(value);
  }
}

/** Signs in on the console's sign-in form with `apiKey` and waits for the navigation to show. */
export async function signIn(page: Page, apiKey: string, timeoutMs = 10_000): Promise<void> {
  await setField(page, 'signin-key', apiKey);
  await testId(page, 'signin-submit').click();
  await shown(page, testId(page, 'nav-requests'), 'the navigation after signing in', timeoutMs);
}

/** The Requests table's row of one logged request. */
export function requestRow(page: Page, requestId: string): Locator {
  return testId(page, 'request-row', `[data-request-id="${requestId}"]`);
}
