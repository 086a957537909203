import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import test from 'ava';
import { chromium, type Page } from 'playwright-core';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';

/** The panel in Debian's Chromium: the whole walk of an operator, against a real daemon. */

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = 'test-output/panel';

async function shots(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.screenshot({ path: `${SHOTS}/${name}-1280.png`, fullPage: true });
  await page.setViewportSize({ width: 360, height: 740 });
  await page.screenshot({ path: `${SHOTS}/${name}-360.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
}

/** Drags with the mouse from one element's centre to another's. */
async function drag(page: Page, from: string, to: string): Promise<void> {
  // The builder fits the view after a node is added: wait until both handles stay put.
  const boxes = async () => [await page.locator(from).boundingBox(), await page.locator(to).boundingBox()];
  let [a, b] = await boxes();
  for (let i = 0; i < 50; i += 1) {
    await page.waitForTimeout(100);
    const [a2, b2] = await boxes();
    const same = JSON.stringify([a, b]) === JSON.stringify([a2, b2]);
    [a, b] = [a2, b2];
    if (same) break;
  }
  if (!a || !b) throw new Error(`no box for ${from} or ${to}`);
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 });
  await page.mouse.up();
}

test('sign in, create a sandbox, live QR and connect, rotate the key, build a flow, answer a handover, release', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.log(`SKIPPED: ${CHROMIUM} is absent (apt-get install chromium); the panel was not driven in a browser`);
    t.pass();
    return;
  }
  t.timeout(120_000);
  await mkdir(SHOTS, { recursive: true });
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
  });

  // Sign in with the server secret; a wrong one shows the error.
  await page.goto(`${d.url}/panel/`);
  await page.getByLabel('Server secret', { exact: true }).fill('wrong');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').filter({ hasText: 'invalid credentials' }).waitFor();
  await shots(page, '01-sign-in');
  await page.getByLabel('Server secret', { exact: true }).fill(d.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Instances' }).waitFor();
  const cookie = (await context.cookies()).find((c) => c.name === 'gw_panel');
  t.truthy(cookie);
  t.true(cookie!.httpOnly);
  t.is(cookie!.sameSite, 'Strict');

  // Create a sandbox instance: its key is shown once.
  await page.getByLabel('Name').fill('shop');
  await page.getByRole('button', { name: 'Create instance' }).click();
  const firstKey = (await page.getByTestId('new-key').textContent())!.trim();
  t.regex(firstKey, /\S{20,}/);
  const id = d.core.instances.list()[0]!.id;
  await page.locator(`[data-instance="${id}"]`).waitFor();
  await shots(page, '02-instances');

  // The instance page shows the live QR; a scan turns it "connected" without a reload.
  await page.getByRole('link', { name: 'shop' }).click();
  await page.getByRole('img', { name: /Pairing QR/ }).waitFor();
  await shots(page, '03-qr');
  const navigations: string[] = [];
  page.on('framenavigated', (f) => navigations.push(f.url()));
  t.is((await d.request('POST', `/api/${id}/sandbox/scan`, { key: firstKey })).status, 200);
  await page.getByTestId('instance-status').filter({ hasText: /^connected$/ }).waitFor({ timeout: 10_000 });
  t.false(await page.getByRole('img', { name: /Pairing QR/ }).isVisible());
  t.deepEqual(navigations, [], 'no reload');

  // Rotate the key: the new one is shown once; the old one is refused.
  await page.getByRole('button', { name: 'Rotate key' }).click();
  const newKey = (await page.getByTestId('new-key').textContent())!.trim();
  t.not(newKey, firstKey);
  t.is((await d.request('GET', `/api/${id}/status`, { key: firstKey })).status, 401);
  t.is((await d.request('GET', `/api/${id}/status`, { key: newKey })).status, 200);
  await shots(page, '04-connected-key');

  // Build message -> condition("agent") -> handover with the mouse; a server error shows on its node.
  await page.getByRole('link', { name: 'Chatbot' }).click();
  await page.getByRole('button', { name: 'Add message' }).click();
  await page.getByRole('button', { name: 'Add condition' }).click();
  await page.getByRole('button', { name: 'Add handover' }).click();
  const node = (nid: string) => `.react-flow__node[data-id="${nid}"]`;
  await page.locator(node('handover-3')).waitFor();
  await drag(page, `${node('message-1')} .react-flow__handle.source`, `${node('condition-2')} .react-flow__handle.target`);
  await drag(page, `${node('condition-2')} [data-handleid="rule-0"]`, `${node('handover-3')} .react-flow__handle.target`);
  await waitFor(async () => (await page.locator('.react-flow__edge').count()) === 2, 3000, 'two edges');
  await page.getByRole('button', { name: 'Save flow' }).click();
  await page.getByTestId('error-message-1').waitFor();
  await shots(page, '05-flow-error');
  await page.getByLabel('text of message-1').fill('Hello! Type agent for a person.');
  await page.getByLabel('rule 1 value of condition-2').fill('agent');
  await page.getByLabel('text of handover-3').fill('A person will answer.');
  await page.getByRole('button', { name: 'Save flow' }).click();
  await page.getByText('Saved: the flow is active.').waitFor();
  t.is(await page.getByTestId('error-message-1').count(), 0);
  await shots(page, '06-flow');
  const flow = (await d.request('GET', `/api/${id}/flow`, { key: newKey })).body.flow;
  t.is(flow.start, 'message-1');
  t.deepEqual(flow.nodes['message-1'], { type: 'message', text: 'Hello! Type agent for a person.', next: 'condition-2' });
  t.deepEqual(flow.nodes['condition-2'], { type: 'condition', rules: [{ contains: 'agent', next: 'handover-3' }] });
  t.deepEqual(flow.nodes['handover-3'], { type: 'handover', text: 'A person will answer.' });

  // An inbound message reaches the handover: it shows in the inbox; answer it, then release.
  const phone = '+15551234567';
  await page.getByRole('link', { name: 'Inbox' }).click();
  await page.getByText('No open handovers.').waitFor();
  for (const message of ['hi', 'I want an agent']) {
    t.is((await d.request('POST', `/api/${id}/sandbox/inbound`, { key: newKey, json: { from: phone, message, name: 'Ann' } })).status, 200);
  }
  await page.getByRole('button', { name: new RegExp(`Ann \\${phone}`) }).click();
  await page.getByRole('list', { name: 'conversation' }).getByText('I want an agent').waitFor();
  await page.getByLabel('Reply').fill('Hi Ann, this is Bob.');
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('list', { name: 'conversation' }).getByText('Hi Ann, this is Bob.').waitFor();
  const sent = (await d.request('GET', `/api/${id}/sandbox/sent`, { key: newKey })).body;
  t.regex(JSON.stringify(sent), /Hi Ann, this is Bob\./);
  await shots(page, '07-inbox');
  await page.getByRole('button', { name: 'Release to bot' }).click();
  await page.getByText('No open handovers.').waitFor();
  t.deepEqual((await d.request('GET', `/api/${id}/handovers`, { key: newKey })).body.handovers, []);

  // Plan (admin) and the webhook page render.
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('heading', { name: 'Plan' }).waitFor();
  await page.getByRole('link', { name: 'Webhook' }).click();
  await page.getByRole('heading', { name: 'Deliveries' }).waitFor();
  await shots(page, '08-webhook');

  // Delete, after a confirmation.
  await page.getByRole('link', { name: 'Gateway panel' }).click();
  await page.locator(`[data-instance="${id}"]`).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('group', { name: 'confirm delete' }).getByRole('button', { name: 'Cancel' }).click();
  t.is(d.core.instances.size, 1);
  await page.locator(`[data-instance="${id}"]`).getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('No instances yet.').waitFor();
  t.is(d.core.instances.size, 0);

  // Sign out: the cookie no longer works.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.is((await d.request('GET', '/api/instances', { headers: { cookie: `gw_panel=${cookie!.value}` } })).status, 401);
  t.deepEqual(cspViolations, []);
});

test('an instance session in the browser sees its own instance and cannot reach another', async (t) => {
  if (!existsSync(CHROMIUM)) {
    t.log(`SKIPPED: ${CHROMIUM} is absent`);
    t.pass();
    return;
  }
  t.timeout(60_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const a = await d.createInstance({ sandbox: true, name: 'mine' });
  const b = await d.createInstance({ sandbox: true, name: 'theirs' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.goto(`${d.url}/panel/`);
  await page.getByRole('tab', { name: 'Instance key' }).click();
  await page.getByLabel('Instance id').fill(a.id);
  await page.getByLabel('API key').fill(a.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('instance-status').filter({ hasText: /qr_code_generated|connecting|disconnected/ }).waitFor();
  t.is(await page.getByRole('heading', { name: 'Plan' }).count(), 0, 'no plan for a tenant');
  // The page's own fetches, with the cookie and its CSRF token, are refused for the other instance.
  const other = await page.evaluate(async (id) => (await fetch(`/api/${id}/status`)).status, b.id);
  t.is(other, 401);
  const list = await page.evaluate(async () => (await fetch('/api/instances')).status);
  t.is(list, 401);
  await page.goto(`${d.url}/panel/#/i/${b.id}`);
  await page.getByRole('alert').waitFor();
  t.regex((await page.getByRole('alert').textContent()) ?? '', /UNAUTHORIZED/);
});
