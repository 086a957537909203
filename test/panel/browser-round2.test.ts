/**
 * Guards issue 25, "The panel, round 2", in Debian's Chromium against a real daemon, with axe-core
 * and screenshots at 1280 and 360 px of every page (browser-helpers.ts):
 * - operators: the admin adds an agent on the Operators page; the agent signs in, sees only its
 *   instance, claims a chat and replies, and the reply is in the audit log under its name (the
 *   Audit page, filtered);
 * - the inbox of every chat: unread counts, newest first, search by name, number and text, a URL
 *   per chat opened at its newest message, media inline or as a download, media sent from the
 *   inbox, released chats kept;
 * - connection health in words (the cause WhatsApp gave and what to do) on the list and the
 *   instance page, the "needs attention" filter; a sandbox's "simulate an inbound message";
 * - the flow builder lays out config/flows/support-menu.json (no overlap, edges never under a
 *   node; at 360 px more than one node in view), and "Saved" does not move the canvas;
 * - no favicon 404 and no 404 for GET /flow.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { fakeFactory } from '../helpers/fake-connection.js';
import { openBrowser, shots, signInAdmin, signInOperator, skipWithoutChromium, statusIs, watchPage } from './browser-helpers.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

async function inbound(d: TestDaemon, inst: { id: string; key: string }, from: string, message: string, name: string): Promise<void> {
  const r = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from, message, name } });
  if (r.status !== 200) throw new Error(`inbound ${r.status} ${JSON.stringify(r.body)}`);
}

async function inboundFile(d: TestDaemon, inst: { id: string; key: string }, from: string, bytes: Buffer, type: string, fileName: string, caption?: string): Promise<void> {
  const form = new FormData();
  form.set('from', from);
  if (caption) form.set('message', caption);
  form.set('file', new Blob([new Uint8Array(bytes)], { type }), fileName);
  const r = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, body: form });
  if (r.status !== 200) throw new Error(`inbound file ${r.status} ${JSON.stringify(r.body)}`);
}

test('operators: the admin adds an agent; the agent sees only its instance, claims a chat and replies; the reply is in the audit log under its name', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const mine = await d.connectedSandbox({ name: 'mine' });
  const other = await d.connectedSandbox({ name: 'other' });
  await inbound(d, mine, '+15550001111', 'Where is my order?', 'Ann');
  await inbound(d, other, '+15550002222', 'a secret of the other shop', 'Zed');
  const { browser, page, problems } = await openBrowser(t);
  await signInAdmin(page, d);

  // The Operators page: an agent for "mine", its one-time password shown once.
  await page.getByRole('link', { name: 'Operators', exact: true }).click();
  await page.getByText('No operators yet').waitFor();
  await page.getByLabel('Name', { exact: true }).fill('bob');
  await page.getByLabel('mine', { exact: true }).check();
  await page.getByRole('button', { name: 'Add operator' }).click();
  const password = (await page.getByTestId('new-key').textContent())!.trim();
  t.regex(password, /^[A-Za-z0-9_-]{24}$/);
  await page.locator('[data-operator="bob"]').getByText('mine').waitFor();
  await page.getByLabel('Name', { exact: true }).fill('ann');
  await page.getByLabel('Role').selectOption('admin');
  await page.getByRole('button', { name: 'Add operator' }).click();
  await page.locator('[data-operator="ann"]').getByText('every instance').waitFor();
  await shots(t, page, '20-operators');

  // The agent, in a browser of its own.
  const agentContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const agent = await watchPage(t, agentContext, (url, status) => status === 401 && (url.includes(other.id) || url === '/api/instances'));
  const ap = agent.page;
  await signInOperator(ap, d, 'bob', password);
  await ap.getByTestId('who').filter({ hasText: 'bob (agent)' }).waitFor();
  await ap.getByRole('heading', { name: 'Your instances' }).waitFor();
  await ap.locator(`[data-instance="${mine.id}"] [data-status="connected"]`).waitFor();
  t.is(await ap.locator(`[data-instance="${other.id}"]`).count(), 0, 'only its own instance');
  t.is(await ap.getByRole('link', { name: 'Operators' }).count(), 0);
  await shots(t, ap, '21-agent-home');
  await ap.getByRole('link', { name: 'mine', exact: true }).click();
  // Read-only status and the inbox: no key, plan, webhook or chatbot.
  for (const name of ['Chatbot', 'Webhook', 'Audit log']) t.is(await ap.getByRole('link', { name, exact: true }).count(), 0, `no ${name} tab`);
  await ap.getByRole('link', { name: 'Ann' }).click();
  await ap.getByRole('list', { name: 'conversation' }).getByText('Where is my order?').waitFor();
  await ap.getByRole('button', { name: 'Claim' }).click();
  await ap.getByTestId('claimed-by').filter({ hasText: 'Claimed by you' }).waitFor();
  await ap.getByLabel('Reply').fill('Hi Ann, Bob here: it ships today.');
  await ap.getByRole('button', { name: 'Send' }).click();
  await ap.getByRole('list', { name: 'conversation' }).getByText('Hi Ann, Bob here: it ships today.').waitFor();
  await shots(t, ap, '22-agent-inbox');
  const sent = (await d.request('GET', `/api/${mine.id}/sandbox/sent`, { key: mine.key })).body.messages as Array<{ message?: string }>;
  t.truthy(sent.find((m) => m.message === 'Hi Ann, Bob here: it ships today.'), 'sent as the instance');
  // Nothing else is open to it, whatever it asks for.
  t.is(await ap.evaluate(async (id) => (await fetch(`/api/${id}/chats`)).status, other.id), 401);
  t.is(await ap.evaluate(async () => (await fetch('/api/instances')).status), 401);
  t.deepEqual(agent.problems, []);

  // The admin sees who claimed the chat, and finds the reply under bob's name in the audit log.
  await page.goto(`${d.url}/panel/#/i/${mine.id}/inbox/${encodeURIComponent('15550001111@s.whatsapp.net')}`);
  await page.getByTestId('claimed-by').filter({ hasText: 'Claimed by bob' }).waitFor();
  await page.getByRole('link', { name: 'Audit log', exact: true }).first().click();
  await page.getByRole('heading', { name: 'Audit log' }).waitFor();
  await page.getByLabel('Actor').fill('operator:bob');
  await page.getByRole('button', { name: 'Filter' }).click();
  await waitFor(async () => (await page.locator('tr[data-actor]:not([data-actor="operator:bob"])').count()) === 0, 10_000, 'the filtered entries');
  const reply = page.locator('[data-action="handover.reply"][data-actor="operator:bob"]');
  await reply.waitFor();
  t.regex((await reply.textContent()) ?? '', /15550001111@s\.whatsapp\.net.*ok/);
  t.true(await page.locator('[data-action="handover.claim"][data-actor="operator:bob"]').isVisible());
  t.true(await page.locator('[data-action="panel.signin"][data-actor="operator:bob"]').isVisible());
  t.is(await page.locator('tr[data-actor]:not([data-actor="operator:bob"])').count(), 0, 'filtered by actor');
  t.notRegex(await page.content(), /it ships today/, 'never a message body');
  await shots(t, page, '23-audit');
  t.deepEqual(problems, []);
});

test('the inbox: every chat with unread counts, search by name, number and text, a URL per chat at its newest message, media inline and as a download, a file sent', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'shop' });
  // Cy wrote long ago and much: the newest messages are below the fold unless the chat opens at them.
  for (let i = 1; i <= 30; i += 1) await inbound(d, inst, '+15550003333', `line ${i} of a long talk`, 'Cy');
  await inbound(d, inst, '+15550001111', 'Do you have the blue mug?', 'Ann');
  await inboundFile(d, inst, '+15550001111', PNG, 'image/png', 'mug.png', 'this one');
  await inboundFile(d, inst, '+15550002222', PDF, 'application/pdf', 'invoice.pdf');
  const { page, problems } = await openBrowser(t);
  await signInAdmin(page, d);
  await page.goto(`${d.url}/panel/#/i/${inst.id}/inbox`);
  const chats = page.getByRole('list', { name: 'chats' }).getByRole('link');
  await chats.first().waitFor();
  t.deepEqual(await page.locator('.chat-list .chat-who').allTextContents(), ['+15550002222', 'Ann', 'Cy'], 'newest first');
  t.is(await chats.filter({ hasText: 'Cy' }).getByTestId('unread').textContent(), '30');
  t.is(await chats.filter({ hasText: 'Ann' }).getByTestId('unread').textContent(), '2');
  await shots(t, page, '24-inbox-list');

  // Search: by name, by number, by text (the server's search).
  const search = page.getByLabel('Search');
  await search.fill('ann');
  await waitFor(async () => (await page.locator('.chat-list [aria-label="chats"] .chat-who').allTextContents()).join() === 'Ann', 10_000, 'Ann by name');
  await search.fill('0003333');
  await waitFor(async () => (await page.locator('.chat-list [aria-label="chats"] .chat-who').allTextContents()).join() === 'Cy', 10_000, 'Cy by number');
  await search.fill('blue mug');
  const found = page.getByRole('list', { name: 'messages found' }).getByRole('link');
  await found.filter({ hasText: 'Do you have the blue mug?' }).waitFor();
  await found.filter({ hasText: 'Do you have the blue mug?' }).click();
  t.regex(page.url(), /#\/i\/inst_[^/]+\/inbox\/15550001111%40s\.whatsapp\.net$/, 'the chat has its URL');
  await search.fill('');

  // Media: the image inline, the PDF as a download.
  const conversation = page.getByRole('list', { name: 'conversation' });
  const img = conversation.getByRole('img', { name: 'this one' });
  await img.waitFor();
  await waitFor(() => img.evaluate((el) => (el as HTMLImageElement).complete && (el as HTMLImageElement).naturalWidth > 0), 10_000, 'the image loaded');
  t.is(await chats.filter({ hasText: 'Ann' }).getByTestId('unread').count(), 0, 'read once opened');
  await page.goto(`${d.url}/panel/#/i/${inst.id}/inbox/${encodeURIComponent('15550002222@s.whatsapp.net')}`);
  const download = conversation.getByRole('link', { name: /Download invoice\.pdf/ });
  await download.waitFor();
  t.is(await download.getAttribute('download'), 'invoice.pdf');
  const media = await d.request('GET', (await download.getAttribute('href'))!, { key: inst.key });
  t.is(media.status, 200);

  // A file sent from the inbox, with its caption.
  await page.getByLabel('Attach a file').setInputFiles({ name: 'catalogue.png', mimeType: 'image/png', buffer: PNG });
  await page.getByLabel('Reply').fill('our catalogue');
  await page.getByRole('button', { name: 'Send' }).click();
  await conversation.getByRole('img', { name: 'our catalogue' }).waitFor();
  const sent = (await d.request('GET', `/api/${inst.id}/sandbox/sent`, { key: inst.key })).body.messages as Array<{ type: string; caption?: string; phone: string }>;
  t.truthy(sent.find((m) => m.type === 'image' && m.caption === 'our catalogue' && m.phone === '+15550002222'));

  // Cy's chat, opened by its URL, at its newest message, at 1280 and at 360 px.
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: width === 360 ? 740 : 800 });
    await page.goto(`${d.url}/panel/#/i/${inst.id}/inbox/${encodeURIComponent('15550003333@s.whatsapp.net')}`);
    await page.reload();
    const newest = conversation.getByText('line 30 of a long talk');
    await newest.waitFor();
    await waitFor(() => newest.evaluate((el) => {
      const box = el.getBoundingClientRect();
      const list = el.closest('ol')!.getBoundingClientRect();
      return box.bottom <= list.bottom + 1 && box.top >= list.top - 1 && box.bottom <= window.innerHeight;
    }), 10_000, `the newest message in view at ${width} px`);
    t.false(await conversation.getByText('line 1 of a long talk', { exact: true }).evaluate((el) => el.getBoundingClientRect().bottom > el.closest('ol')!.getBoundingClientRect().top), 'the oldest is scrolled away');
  }
  await page.setViewportSize({ width: 1280, height: 800 });
  await shots(t, page, '25-inbox-chat');
  t.deepEqual(problems, []);
});

test('health in words on the list and the instance page, the "needs attention" filter; a sandbox plays an inbound message; no favicon or /flow 404', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  t.teardown(() => d.close());
  const fine = await d.connectedSandbox({ name: 'fine shop' });
  const wa = await d.createInstance({ name: 'phone shop' });
  await waitFor(() => fake.made.get(wa.id), 10_000, 'the WhatsApp connection');
  const conn = fake.made.get(wa.id)!;
  conn.reason = 'WhatsApp cannot be reached: getaddrinfo ENOTFOUND web.whatsapp.com; retry 3 of 20 in 8 s';
  conn.set('disconnected');
  const { page, problems } = await openBrowser(t);
  await signInAdmin(page, d);

  const row = page.locator(`[data-instance="${wa.id}"]`);
  await row.locator('[data-status="disconnected"]').filter({ hasText: 'Disconnected' }).waitFor();
  await row.getByText("WhatsApp cannot be reached: this server's DNS does not resolve web.whatsapp.com.").waitFor();
  await row.getByText(/What to do: Check the server's network and DNS/).waitFor();
  await row.getByText(/Reported: .*getaddrinfo ENOTFOUND/).waitFor();
  t.is(await page.locator(`[data-instance="${fine.id}"] [data-testid="health"]`).count(), 0, 'nothing to say about a connected one');
  await page.getByLabel(/Needs attention only \(1\)/).check();
  await page.locator(`[data-instance="${fine.id}"]`).waitFor({ state: 'detached' });
  t.true(await row.isVisible());
  t.is(await page.locator('text=qr_code_generated').count() + (await page.locator('text=/^disconnected$/').count()), 0, 'no raw state as a badge');
  await shots(t, page, '26-health-list');
  await row.getByRole('link', { name: 'phone shop' }).click();
  await statusIs(page, 'disconnected').filter({ hasText: 'Disconnected' }).waitFor();
  await page.getByText(/What to do: Check the server's network and DNS/).waitFor();
  await shots(t, page, '27-health-instance');

  // The connected sandbox: a customer's message played from the overview, then in the inbox.
  await page.goto(`${d.url}/panel/#/i/${fine.id}`);
  await statusIs(page, 'connected').waitFor();
  await page.getByLabel('From (phone)').fill('+15550004444');
  await page.getByLabel('Name', { exact: true }).fill('Dee');
  await page.getByRole('textbox', { name: 'Message', exact: true }).fill('Is the shop open?');
  await page.getByRole('button', { name: 'Simulate an inbound message' }).click();
  await page.getByRole('status').filter({ hasText: 'it is in the inbox' }).waitFor();
  await page.getByRole('link', { name: 'Inbox' }).click();
  await page.getByRole('link', { name: /Dee/ }).click();
  await page.getByRole('list', { name: 'conversation' }).getByText('Is the shop open?').waitFor();

  // No flow yet: the builder asks without a 404 (the watch on failed requests would show it); the favicon is there.
  await page.getByRole('link', { name: 'Chatbot' }).click();
  await page.getByText('No flow yet: add a node to begin.').waitFor();
  t.is(await page.locator('link[rel="icon"]').getAttribute('href'), '/panel/favicon.svg');
  const icon = await page.evaluate(async () => {
    const r = await fetch('/panel/favicon.svg');
    return { status: r.status, type: r.headers.get('content-type') };
  });
  t.deepEqual(icon, { status: 200, type: 'image/svg+xml' });
  t.deepEqual(problems, []);
});

/** Node boxes and, for every edge, whether a point of it (away from its ends) lies inside a node. */
async function geometry(page: Page) {
  return page.evaluate(() => {
    const boxes = [...document.querySelectorAll('.react-flow__node')].map((n) => ({ id: n.getAttribute('data-id')!, r: n.getBoundingClientRect() }));
    const inside: string[] = [];
    for (const path of document.querySelectorAll<SVGPathElement>('.react-flow__edge-path')) {
      const length = path.getTotalLength();
      const m = path.getScreenCTM()!;
      for (let at = 14; at < length - 14; at += 6) {
        const p = path.getPointAtLength(at);
        const x = m.a * p.x + m.c * p.y + m.e;
        const y = m.b * p.x + m.d * p.y + m.f;
        const hit = boxes.find(({ r }) => x > r.left + 2 && x < r.right - 2 && y > r.top + 2 && y < r.bottom - 2);
        if (hit) {
          inside.push(`${path.closest('.react-flow__edge')?.getAttribute('data-id') ?? '?'} under ${hit.id}`);
          break;
        }
      }
    }
    const overlaps: string[] = [];
    for (let i = 0; i < boxes.length; i += 1)
      for (let j = i + 1; j < boxes.length; j += 1) {
        const a = boxes[i]!.r;
        const b = boxes[j]!.r;
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps.push(`${boxes[i]!.id} over ${boxes[j]!.id}`);
      }
    const canvas = document.querySelector('.canvas')!.getBoundingClientRect();
    const inView = boxes.filter(({ r }) => r.right > canvas.left + 20 && r.left < canvas.right - 20 && r.bottom > canvas.top + 20 && r.top < canvas.bottom - 20).length;
    return { nodes: boxes.length, edges: document.querySelectorAll('.react-flow__edge').length, inside, overlaps, inView };
  });
}

test('the flow builder lays out config/flows/support-menu.json: no node over another, no edge under a node, more than one node at 360 px; "Saved" does not move the canvas', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'shop' });
  const file = JSON.parse(await readFile(new URL('../../config/flows/support-menu.json', import.meta.url), 'utf8')) as { nodes: Record<string, unknown> };
  t.is((await d.request('PUT', `/api/${inst.id}/flow`, { key: inst.key, json: file })).status, 200);
  const { page, problems } = await openBrowser(t);
  await signInAdmin(page, d);
  await page.goto(`${d.url}/panel/#/i/${inst.id}/flow`);
  const count = Object.keys(file.nodes).length;
  await page.locator(`.canvas[data-fitted="${count}"]`).waitFor();
  const wide = await geometry(page);
  t.is(wide.nodes, count);
  t.is(wide.edges, 7);
  t.deepEqual(wide.overlaps, [], 'no node over another');
  t.deepEqual(wide.inside, [], 'no edge under a node');
  t.is(wide.inView, count, 'every node in view at 1280 px');
  await page.getByText('Saved (the layout changed: save to keep it).').waitFor();
  await shots(t, page, '28-flow-laid-out');

  // Saving: the message appears in a line that was already there; the canvas does not move.
  const before = await page.locator('.canvas').boundingBox();
  await page.getByRole('button', { name: 'Save and activate' }).click();
  await page.getByText('Saved: the flow is active.').waitFor();
  t.deepEqual(await page.locator('.canvas').boundingBox(), before, 'no layout shift');
  const stored = (await d.request('GET', `/api/${inst.id}/flow`, { key: inst.key })).body.flow as { nodes: Record<string, { _position?: { x: number; y: number } }> };
  t.true(Object.values(stored.nodes).every((n) => Number.isInteger(n._position?.x)), 'the layout is kept once saved');

  // At 360 px: the start node and the ones it leads to, readable, and still nothing under a node.
  await page.setViewportSize({ width: 360, height: 740 });
  await page.reload();
  await page.locator(`.canvas[data-fitted="${count}"]`).waitFor();
  const narrow = await geometry(page);
  t.true(narrow.inView >= 2, `${narrow.inView} node(s) in view at 360 px`);
  t.deepEqual(narrow.inside, []);
  await page.setViewportSize({ width: 1280, height: 800 });
  t.deepEqual(problems, []);
});
