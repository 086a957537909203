/**
 * Guards issue 24, "settings and proxy on the instance page; groups and calls visible in the inbox
 * where they belong", in Debian's Chromium against a real daemon with sandbox instances, with
 * axe-core and screenshots at 1280 and 360 px (browser-helpers.ts) and no failed request besides
 * the ones a test provokes on purpose:
 * - the Settings card: every setting as a labelled control, saved with PUT (only what changed) and
 *   read back; the proxy shown masked and its credentials kept when put back; a 400 shown under
 *   the field it names; an instance-key session refused the proxy (403 PROXY_NOT_ALLOWED) gets it
 *   read-only with an explanation and the rest saved; an agent sees no settings;
 * - group chats by their subject (also renamed live) with a group badge, each message with who
 *   wrote it, for the admin and for an agent;
 * - an incoming call in its caller's chat (voice or video, time, Reject while it rings), rejected
 *   from the panel; a call from someone who never wrote gets a chat of its own; with
 *   calls.autoReject on, "rejected automatically".
 */
import test from 'ava';
import type { Page } from 'playwright-core';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { openBrowser, shots, signInAdmin, signInOperator, skipWithoutChromium, statusIs, watchPage } from './browser-helpers.js';

type Inst = { id: string; key: string };
const GROUP = '120363041234567890@g.us';

async function ok(d: TestDaemon, inst: Inst, method: string, path: string, json: unknown): Promise<Record<string, unknown>> {
  const r = await d.request(method, `/api/${inst.id}${path}`, { key: inst.key, json });
  if (r.status !== 200) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as Record<string, unknown>;
}

/** The bodies of the panel's PUTs to a settings route, as sent. */
function settingsPuts(page: Page): Array<Record<string, unknown>> {
  const puts: Array<Record<string, unknown>> = [];
  page.on('request', (r) => {
    if (r.method() === 'PUT' && /\/settings$/.test(new URL(r.url()).pathname)) puts.push(r.postDataJSON() as Record<string, unknown>);
  });
  return puts;
}

const settingsCard = (page: Page) => page.locator('form.settings');

test('settings: every setting saved with only what changed and read back, the proxy masked and kept, a 400 under its field', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'shop' });
  // The one refusal this test provokes: a proxy that is not one.
  const { page, problems } = await openBrowser(t, { expected: (url, status) => status === 400 && url === `/api/instances/${inst.id}/settings` });
  const puts = settingsPuts(page);
  await signInAdmin(page, d);
  await page.goto(`${d.url}/panel/#/i/${inst.id}/overview`);
  const card = settingsCard(page);
  await card.getByRole('heading', { name: 'Settings' }).waitFor();
  // Every setting is a labelled control, off by default.
  for (const label of ['Reject calls automatically', 'Always online', 'Mark received messages read', 'Ignore groups', 'Ignore status updates', "Sync the phone's full history"]) {
    t.false(await card.getByLabel(label, { exact: true }).isChecked(), `${label} starts off`);
  }
  t.is(await card.getByLabel('Proxy').inputValue(), '');

  await card.getByLabel('Reject calls automatically', { exact: true }).check();
  await card.getByLabel('Message to the caller after a reject (optional)').fill('Sorry, no calls here: please write.');
  await card.getByLabel('Always online', { exact: true }).check();
  await card.getByLabel('Proxy').fill('socks5://alice:s3cretpw@proxy.example.com:1080');
  await card.getByRole('button', { name: 'Save settings' }).click();
  await card.getByRole('status').filter({ hasText: 'Saved: calls, always online, proxy.' }).waitFor();
  t.deepEqual(puts.at(-1), { calls: { autoReject: true, rejectMessage: 'Sorry, no calls here: please write.' }, alwaysOnline: true, proxy: 'socks5://alice:s3cretpw@proxy.example.com:1080' }, 'only what changed');
  const stored = await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key });
  t.like(stored.body, { calls: { autoReject: true, rejectMessage: 'Sorry, no calls here: please write.' }, alwaysOnline: true, autoRead: false, proxy: 'socks5://***@proxy.example.com:1080' });
  t.is(await card.getByLabel('Proxy').inputValue(), 'socks5://***@proxy.example.com:1080', 'shown masked as the API returns it');

  // Read back after a reload: the controls as stored, the password nowhere in the page.
  await page.reload();
  await card.getByLabel('Proxy').waitFor();
  await waitFor(async () => (await card.getByLabel('Proxy').inputValue()) === 'socks5://***@proxy.example.com:1080', 10_000, 'the masked proxy');
  t.true(await card.getByLabel('Reject calls automatically', { exact: true }).isChecked());
  t.true(await card.getByLabel('Always online', { exact: true }).isChecked());
  t.is(await card.getByLabel('Message to the caller after a reject (optional)').inputValue(), 'Sorry, no calls here: please write.');
  t.notRegex(await page.content(), /s3cretpw/);
  await shots(t, page, '40-settings');

  // A change elsewhere leaves the masked proxy out of the PUT: the stored credentials stay.
  await card.getByLabel('Mark received messages read', { exact: true }).check();
  await card.getByRole('button', { name: 'Save settings' }).click();
  await card.getByRole('status').filter({ hasText: 'Saved: read marks.' }).waitFor();
  t.deepEqual(puts.at(-1), { autoRead: true });
  t.is(d.core.instances.get(inst.id)?.settings?.proxy, 'socks5://alice:s3cretpw@proxy.example.com:1080');

  // "***" kept in an edited URL would become a user name: refused before any request.
  const before = puts.length;
  await card.getByLabel('Proxy').fill('socks5://***@proxy.example.com:1081');
  await card.getByRole('button', { name: 'Save settings' }).click();
  await card.getByText(/type the user and password again/).waitFor();
  t.is(puts.length, before, 'nothing sent');

  // A 400 shows under the field it names, the field marked invalid.
  await card.getByLabel('Proxy').fill('ftp://proxy.example.com');
  await card.getByRole('button', { name: 'Save settings' }).click();
  const fieldError = card.locator('#settings-proxy-error');
  await fieldError.waitFor();
  t.regex((await fieldError.textContent()) ?? '', /^proxy: the scheme "ftp:" is not allowed/);
  t.is(await card.getByLabel('Proxy').getAttribute('aria-invalid'), 'true');
  t.regex((await card.getByLabel('Proxy').getAttribute('aria-describedby')) ?? '', /settings-proxy-error/);
  await card.getByRole('alert').filter({ hasText: 'Not saved' }).waitFor();
  await shots(t, page, '41-settings-error');

  // Emptied: connect directly.
  await card.getByLabel('Proxy').fill('');
  await card.getByRole('button', { name: 'Save settings' }).click();
  await card.getByRole('status').filter({ hasText: 'Saved: proxy.' }).waitFor();
  t.deepEqual(puts.at(-1), { proxy: null });
  t.is(d.core.instances.get(inst.id)?.settings?.proxy ?? null, null);
  t.deepEqual(problems, []);
});

test('settings of an instance-key session: the proxy refused (403 PROXY_NOT_ALLOWED) turns read-only with why, the rest is saved; an agent sees no settings', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'tenant shop' });
  t.is((await d.request('PUT', `/api/instances/${inst.id}/settings`, { secret: d.secret, json: { proxy: 'http://bob:pw@proxy.example.com:3128' } })).status, 200);
  const { browser, page, problems } = await openBrowser(t, { expected: (url, status) => status === 403 && url === `/api/${inst.id}/settings` });
  const puts = settingsPuts(page);
  await page.goto(`${d.url}/panel/`);
  await page.getByLabel('Instance id and API key').check();
  await page.getByLabel('Instance id', { exact: true }).fill(inst.id);
  await page.getByLabel('API key', { exact: true }).fill(inst.key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const card = settingsCard(page);
  await waitFor(async () => (await card.getByLabel('Proxy').inputValue().catch(() => '')) === 'http://***@proxy.example.com:3128', 20_000, 'the masked proxy');
  t.true(await card.getByLabel('Proxy').isEditable(), 'editable until the server refuses');

  await card.getByLabel('Ignore status updates', { exact: true }).check();
  await card.getByLabel('Proxy').fill('socks5://me:mine@other.example.com:1080');
  await card.getByRole('button', { name: 'Save settings' }).click();
  await card.getByRole('alert').filter({ hasText: 'Saved: ignore status. The proxy was not changed: only the administrator may set it.' }).waitFor();
  t.deepEqual(puts, [{ ignoreStatus: true, proxy: 'socks5://me:mine@other.example.com:1080' }, { ignoreStatus: true }], 'refused, then the rest without the proxy');
  const proxy = card.getByLabel('Proxy');
  t.false(await proxy.isEditable(), 'read-only');
  t.is(await proxy.inputValue(), 'http://***@proxy.example.com:3128', 'back to what is stored');
  t.regex((await card.getByTestId('proxy-locked').textContent()) ?? '', /only its administrator set an instance's proxy/);
  t.regex((await proxy.getAttribute('aria-describedby')) ?? '', /settings-proxy-locked/);
  t.like((await d.request('GET', `/api/${inst.id}/settings`, { key: inst.key })).body, { ignoreStatus: true, proxy: 'http://***@proxy.example.com:3128' });
  t.is(d.core.instances.get(inst.id)?.settings?.proxy, 'http://bob:pw@proxy.example.com:3128', 'the stored proxy untouched');
  await shots(t, page, '42-settings-tenant');
  // Still read-only after a reload of the tab.
  await page.reload();
  await waitFor(async () => (await card.getByLabel('Proxy').inputValue().catch(() => '')) !== '', 20_000, 'the settings');
  t.false(await card.getByLabel('Proxy').isEditable());
  t.deepEqual(problems, []);

  // An agent of this instance: status and inbox, no settings (and no request for them).
  const pw = (await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'bob', role: 'agent', instances: [inst.id] } })).body.password as string;
  const agentContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const agent = await watchPage(t, agentContext);
  const asked: string[] = [];
  agent.page.on('request', (r) => asked.push(new URL(r.url()).pathname));
  await signInOperator(agent.page, d, 'bob', pw);
  await agent.page.goto(`${d.url}/panel/#/i/${inst.id}/overview`);
  await statusIs(agent.page, 'connected').waitFor({ timeout: 20_000 });
  t.is(await agent.page.getByRole('heading', { name: 'Settings' }).count(), 0);
  t.is(await agent.page.getByLabel('Proxy').count(), 0);
  t.false(asked.some((p) => p.endsWith('/settings')), 'no settings request');
  t.deepEqual(agent.problems, []);
});

test('a group chat in the inbox: its subject (renamed live), a group badge, who wrote each message; the same for an agent', async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'club' });
  await ok(d, inst, 'POST', '/sandbox/group-event', { chatId: GROUP, by: '+15557654321', action: 'add', participants: ['+10000000000', '+15550001111', '+15550002222'], subject: 'Weekend hikers' });
  await ok(d, inst, 'POST', '/sandbox/inbound', { chatId: GROUP, from: '+15550001111', name: 'Ann', message: 'Who brings the map?' });
  await ok(d, inst, 'POST', '/sandbox/inbound', { chatId: GROUP, from: '+15550002222', message: 'I do.' });
  await ok(d, inst, 'POST', '/sandbox/inbound', { from: '+15550003333', name: 'Cy', message: 'A direct question' });
  const { browser, page, problems } = await openBrowser(t);
  await signInAdmin(page, d);
  await page.goto(`${d.url}/panel/#/i/${inst.id}/inbox`);
  const groupLink = page.locator(`a.chat[data-chat="${GROUP}"]`);
  await groupLink.getByText('Weekend hikers').waitFor();
  t.is(await groupLink.locator('.badge').textContent(), 'Group');
  t.is(await page.locator('a.chat[data-chat="15550003333@s.whatsapp.net"] .badge').count(), 0, 'no badge on a person');
  await groupLink.click();
  await page.getByRole('heading', { name: /Weekend hikers/ }).waitFor();
  const conversation = page.getByRole('list', { name: 'conversation' });
  const ann = conversation.locator('li', { hasText: 'Who brings the map?' });
  await ann.waitFor();
  t.is(await ann.locator('.sender').textContent(), 'Ann · +15550001111');
  t.is(await conversation.locator('li', { hasText: 'I do.' }).locator('.sender').textContent(), '+15550002222', 'a sender without a name by their phone');
  // A reply from the inbox goes to the group and carries no sender line (it is ours).
  await page.getByLabel('Reply').fill('See you at nine.');
  await page.getByRole('button', { name: 'Send' }).click();
  const mine = conversation.locator('li.out', { hasText: 'See you at nine.' });
  await mine.waitFor();
  t.is(await mine.locator('.sender').count(), 0);
  // Renamed on a phone: the list and the heading follow (group.updated).
  await ok(d, inst, 'POST', '/sandbox/group-event', { chatId: GROUP, by: '+15557654321', subject: 'Sunday hikers' });
  await page.getByRole('heading', { name: /Sunday hikers/ }).waitFor();
  await groupLink.getByText('Sunday hikers').waitFor();
  await shots(t, page, '43-inbox-group');
  t.deepEqual(problems, []);

  // An agent reads the same names.
  const pw = (await d.request('POST', '/api/operators', { secret: d.secret, json: { name: 'bea', role: 'agent', instances: [inst.id] } })).body.password as string;
  const agent = await watchPage(t, await browser.newContext({ viewport: { width: 1280, height: 800 } }));
  await signInOperator(agent.page, d, 'bea', pw);
  await agent.page.goto(`${d.url}/panel/#/i/${inst.id}/inbox/${encodeURIComponent(GROUP)}`);
  await agent.page.getByRole('heading', { name: /Sunday hikers/ }).waitFor();
  await agent.page.getByRole('list', { name: 'conversation' }).locator('li', { hasText: 'Who brings the map?' }).locator('.sender', { hasText: 'Ann' }).waitFor();
  t.deepEqual(agent.problems, []);
});

test("an incoming call in its caller's chat, rejected from the panel; a stranger's call gets a chat; auto-rejected calls say so", async (t) => {
  if (skipWithoutChromium(t)) return;
  t.timeout(180_000);
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox({ name: 'hotline' });
  await ok(d, inst, 'POST', '/sandbox/inbound', { from: '+15550003333', name: 'Cy', message: 'May I call you?' });
  await ok(d, inst, 'POST', '/sandbox/inbound', { from: '+15550005555', name: 'Dee', message: 'Another chat' });
  const { page, problems } = await openBrowser(t);
  await signInAdmin(page, d);
  await page.goto(`${d.url}/panel/#/i/${inst.id}/inbox/${encodeURIComponent('15550003333@s.whatsapp.net')}`);
  const conversation = page.getByRole('list', { name: 'conversation' });
  await conversation.getByText('May I call you?').waitFor();

  // Cy calls: the line is in Cy's conversation, after the message, with a Reject button.
  const { callId } = (await ok(d, inst, 'POST', '/sandbox/call', { from: '+15550003333' })) as { callId: string };
  const line = conversation.locator(`li[data-call="${callId}"]`);
  await line.waitFor();
  t.regex((await line.textContent()) ?? '', /Incoming voice call/);
  t.regex((await line.locator('.time').textContent()) ?? '', /\d/);
  t.is(await conversation.locator('li').last().getAttribute('data-call'), callId, 'in time order: after the message');
  await page.locator('a.chat[data-chat="15550003333@s.whatsapp.net"]').getByText('incoming call').waitFor();
  await shots(t, page, '44-inbox-call');
  await line.getByRole('button', { name: 'Reject the voice call from +15550003333' }).click();
  await line.and(page.locator('[data-call-state="rejected"]')).waitFor();
  t.regex((await line.textContent()) ?? '', /rejected/);
  t.is(await line.getByRole('button').count(), 0, 'no Reject once rejected');
  const actions = (await d.request('GET', `/api/${inst.id}/sandbox/actions`, { key: inst.key })).body.actions as Array<{ action: string; callId?: string }>;
  t.truthy(actions.find((a) => a.action === 'reject-call' && a.callId === callId), 'rejected through the gateway');

  // Someone who never wrote calls by video: a chat of their own, at the top, with the call in it.
  const { callId: videoId } = (await ok(d, inst, 'POST', '/sandbox/call', { from: '+15550004444', video: true })) as { callId: string };
  const stranger = page.locator('a.chat[data-chat="15550004444@s.whatsapp.net"]');
  await stranger.waitFor();
  t.is(await page.locator('a.chat').first().getAttribute('data-chat'), '15550004444@s.whatsapp.net', 'newest activity first');
  await stranger.click();
  const video = conversation.locator(`li[data-call="${videoId}"]`);
  await video.waitFor();
  t.regex((await video.textContent()) ?? '', /Incoming video call/);
  t.true(await video.getByRole('button', { name: /Reject the video call/ }).isVisible());

  // With calls.autoReject on, the gateway rejects at once, and the line says so.
  t.is((await d.request('PUT', `/api/${inst.id}/settings`, { key: inst.key, json: { calls: { autoReject: true } } })).status, 200);
  await page.locator('a.chat[data-chat="15550005555@s.whatsapp.net"]').click();
  await conversation.getByText('Another chat').waitFor();
  const { callId: autoId } = (await ok(d, inst, 'POST', '/sandbox/call', { from: '+15550005555' })) as { callId: string };
  const auto = conversation.locator(`li[data-call="${autoId}"][data-call-state="auto-rejected"]`);
  await auto.waitFor();
  t.regex((await auto.textContent()) ?? '', /rejected automatically/);
  t.is(await auto.getByRole('button').count(), 0);
  await waitFor(
    async () => ((await d.request('GET', `/api/${inst.id}/sandbox/actions`, { key: inst.key })).body.actions as Array<{ callId?: string }>).some((a) => a.callId === autoId),
    10_000,
    'the automatic reject',
  );
  // The calls stay for the page's lifetime: back to Cy's chat through another tab and back.
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('link', { name: 'Inbox' }).click();
  await page.locator('a.chat[data-chat="15550003333@s.whatsapp.net"]').click();
  await conversation.locator(`li[data-call="${callId}"][data-call-state="rejected"]`).waitFor();
  await shots(t, page, '45-inbox-calls');
  t.deepEqual(problems, []);
});
