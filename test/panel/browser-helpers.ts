/**
 * What the browser tests share: Debian's Chromium through playwright-core, a watch on CSP
 * violations, page errors and failed requests (a favicon 404, a 404 for GET /flow), screenshots at
 * 1280 and 360 px with the 360 px overflow check, and axe-core on each page at both widths (no
 * serious or critical violation).
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { ExecutionContext } from 'ava';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import type { TestDaemon } from '../helpers/daemon.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = 'test-output/panel';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export function skipWithoutChromium(t: ExecutionContext): boolean {
  if (existsSync(CHROMIUM)) return false;
  // In CI (.ci/run installs chromium) a missing browser is a failure, never a silent pass.
  if (process.env.CI === 'true') t.fail(`${CHROMIUM} is absent in CI: .ci/run should have installed it`);
  else {
    t.log(`SKIPPED: ${CHROMIUM} is absent (apt-get install chromium); the panel was not driven in a browser`);
    t.pass();
  }
  return true;
}

export interface Watched {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** CSP violations, uncaught page errors, console errors and failed requests of the panel; must stay empty. */
  problems: string[];
}

/** Answers that are not problems: a test's own refused calls say so by matching here. */
export type Expected = (url: string, status: number) => boolean;

export async function openBrowser(t: ExecutionContext, options: { clipboard?: boolean; expected?: Expected } = {}): Promise<Watched> {
  await mkdir(SHOTS, { recursive: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  if (options.clipboard) await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  return { browser, context, ...(await watchPage(t, context, options.expected)) };
}

/** A page of `context`, watched. */
export async function watchPage(t: ExecutionContext, context: BrowserContext, expected?: Expected): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) problems.push(`CSP: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Issue 25: no favicon 404, no 404 for GET /flow: any refused request of the panel shows.
  page.on('response', (r) => {
    const url = new URL(r.url());
    // Not signed in (yet, or any more) is what GET /panel/api/session answers 401 for.
    const notSignedIn = url.pathname === '/panel/api/session' && r.status() === 401 && r.request().method() === 'GET';
    if (r.status() >= 400 && !notSignedIn && !(expected?.(url.pathname + url.search, r.status()) ?? false)) problems.push(`HTTP ${r.status()} ${r.request().method()} ${url.pathname}${url.search}`);
  });
  // A failed test leaves a picture of where it stopped.
  t.teardown(async () => {
    if (!t.passed) await page.screenshot({ path: `${SHOTS}/FAILED-${t.title.slice(0, 40).replace(/\W+/g, '-')}.png`, fullPage: true }).catch(() => undefined);
  });
  return { page, problems };
}

/** Two frames: layout and paint after a change of viewport. */
export const frames = (page: Page): Promise<void> => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));

/**
 * axe-core on the page as it is: no serious or critical violation. Loaded through the DevTools
 * protocol (an injected <script> would be refused by the panel's CSP, as it should be).
 */
export async function axe(t: ExecutionContext, page: Page, name: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(`${AXE_SOURCE}\n;0`);
  const violations = await page.evaluate(async () => {
    const w = window as unknown as { axe: { run(ctx: Document, o: unknown): Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: unknown[] }> }> }> } };
    const r = await w.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)) }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  t.deepEqual(bad, [], `${name}: axe found ${bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(', ')}`).join('; ')}`);
}

/**
 * Screenshots of the page at 1280 and 360 px, axe-core at both, and the 360 px check: nothing
 * wider than the screen (no horizontal scrolling); the elements sticking out are named.
 */
export async function shots(t: ExecutionContext, page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 800 });
  await frames(page);
  await page.screenshot({ path: `${SHOTS}/${name}-1280.png`, fullPage: true });
  await axe(t, page, `${name} at 1280 px`);
  await page.setViewportSize({ width: 360, height: 740 });
  await frames(page);
  const wide = await page.evaluate(() => {
    const width = document.documentElement.scrollWidth;
    const out = [...document.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > 360.5 && !el.closest('.react-flow__viewport, .table-scroll'))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} ${Math.round(el.getBoundingClientRect().right)}`);
    return { width, out };
  });
  t.true(wide.width <= 360, `${name} at 360 px is ${wide.width} px wide: ${wide.out.join(', ')}`);
  await page.screenshot({ path: `${SHOTS}/${name}-360.png`, fullPage: true });
  await axe(t, page, `${name} at 360 px`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await frames(page);
}

export async function signInAdmin(page: Page, d: TestDaemon): Promise<void> {
  await page.goto(`${d.url}/panel/`);
  await page.getByLabel('Server secret', { exact: true }).fill(d.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Instances' }).waitFor();
}

export async function signInOperator(page: Page, d: TestDaemon, name: string, password: string): Promise<void> {
  await page.goto(`${d.url}/panel/`);
  await page.getByLabel('Operator name and password').check();
  await page.getByLabel('Operator', { exact: true }).fill(name);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('who').filter({ hasText: name }).waitFor();
}

/** Drags with the mouse from one element's centre to another's. */
export async function drag(page: Page, from: Locator, to: Locator): Promise<void> {
  const a = await from.boundingBox();
  const b = await to.boundingBox();
  if (!a || !b) throw new Error('no box to drag between');
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  await page.mouse.up();
}

/** Presses Tab (or Shift+Tab) until `target` has the focus: proof that the keyboard reaches it. */
export async function tabTo(page: Page, target: Locator, options: { back?: boolean; max?: number } = {}): Promise<void> {
  await target.waitFor();
  const max = options.max ?? 100;
  for (let i = 0; i <= max; i += 1) {
    if (await target.evaluate((el) => el === document.activeElement)) return;
    await page.keyboard.press(options.back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`${String(target)} was not reached with ${options.back ? 'Shift+Tab' : 'Tab'} in ${max} presses`);
}

/** Chooses an option of the focused <select> with the arrow keys alone. */
export async function arrowTo(page: Page, select: Locator, value: string): Promise<void> {
  const options = await select.locator('option').evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
  const want = options.indexOf(value);
  if (want < 0) throw new Error(`no option ${value}`);
  await page.keyboard.press('Home');
  for (let i = 0; i < want; i += 1) await page.keyboard.press('ArrowDown');
  const got = await select.inputValue();
  if (got !== value) throw new Error(`the arrow keys chose ${got}, not ${value}`);
}

/** The instance page's status badge in a given raw state. */
export const statusIs = (page: Page, status: string, testId = 'instance-status'): Locator => page.locator(`[data-testid="${testId}"][data-status="${status}"]`);
