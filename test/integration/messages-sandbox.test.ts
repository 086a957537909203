import test from 'ava';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { setWebhook, startReceiver } from '../helpers/receiver.js';

// Contract part 2 ("Reading", "Events", "Sandbox, part 2") on sandbox instances: message lifecycle,
// history, media, addressing. The same behaviours through real Baileys are in the double tests.

async function sent(d: TestDaemon, inst: { id: string; key: string }, body: Record<string, unknown>) {
  const res = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { ...(body.to === undefined ? { phone: '+15551234567' } : {}), message: 'hi', ...body } });
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { messageId: string; to: string };
}

test('a sent message is pending, then sent, and receipts move it forward, never back; each step is a message.status webhook in order', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url, { events: ['message.status'] });
    const { messageId, to } = await sent(d, inst, {});
    t.is(to, '15551234567@s.whatsapp.net');
    t.like((await d.request('GET', `/api/${inst.id}/messages/${messageId}`, { key: inst.key })).body, { messageId, chatId: to, fromMe: true, status: 'sent', type: 'text', text: 'hi' });
    for (const status of ['delivered', 'read', 'delivered', 'played']) {
      const r = await d.request('POST', `/api/${inst.id}/sandbox/receipt`, { key: inst.key, json: { messageId, status } });
      t.is(r.status, 200);
    }
    await receiver.waitForCount(4);
    await new Promise((r) => setTimeout(r, 200));
    t.deepEqual(
      receiver.requests.map((r) => r.json.data.status),
      ['sent', 'delivered', 'read', 'played'],
      'the late "delivered" after "read" is not reported: a status never goes backwards',
    );
    t.true(receiver.requests.every((r) => r.json.data.messageId === messageId && r.json.data.chatId === to));
    t.is((await d.request('GET', `/api/${inst.id}/messages/${messageId}`, { key: inst.key })).body.status, 'played');
    // A receipt for a message this sandbox never sent is a 404, not a fake status.
    t.is((await d.request('POST', `/api/${inst.id}/sandbox/receipt`, { key: inst.key, json: { messageId: 'NOPE123', status: 'read' } })).status, 404);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('history: chats newest first with unread counts, pages of messages in and out, read marks', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    const a = '+15550000001';
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: a, message: 'one', name: 'Ann' } });
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: a, message: 'two' } });
    await sent(d, inst, { to: '15550000001@s.whatsapp.net', message: 'answer' });
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15550000002', message: 'other chat' } });
    const chats = (await d.request('GET', `/api/${inst.id}/chats`, { key: inst.key })).body.chats as Array<{ chatId: string; unread: number; name?: string }>;
    t.deepEqual(chats.map((c) => c.chatId), ['15550000002@s.whatsapp.net', '15550000001@s.whatsapp.net']);
    t.like(chats[1], { unread: 2, name: 'Ann' });
    const page = (await d.request('GET', `/api/${inst.id}/chats/15550000001@s.whatsapp.net/messages?limit=2`, { key: inst.key })).body;
    t.deepEqual(page.messages.map((m: { text: string }) => m.text), ['answer', 'two']);
    const older = (await d.request('GET', `/api/${inst.id}/chats/15550000001@s.whatsapp.net/messages?limit=2&before=${page.nextBefore}`, { key: inst.key })).body;
    t.deepEqual(older.messages.map((m: { text: string }) => m.text), ['one']);
    const read = await d.request('POST', `/api/${inst.id}/read`, { key: inst.key, json: { chatId: '15550000001@s.whatsapp.net' } });
    t.is(read.body.read, 2);
    const after = (await d.request('GET', `/api/${inst.id}/chats`, { key: inst.key })).body.chats as Array<{ chatId: string; unread: number }>;
    t.is(after.find((c) => c.chatId === '15550000001@s.whatsapp.net')?.unread, 0);
    // Bad input is a clear 400, an unknown chat a 404.
    t.is((await d.request('GET', `/api/${inst.id}/chats/nonsense/messages`, { key: inst.key })).status, 400);
    t.is((await d.request('GET', `/api/${inst.id}/chats/15559999999@s.whatsapp.net/messages`, { key: inst.key })).status, 404);
    t.is((await d.request('GET', `/api/${inst.id}/chats/15550000001@s.whatsapp.net/messages?limit=0`, { key: inst.key })).body.error.code, 'INVALID_FIELD');
  } finally {
    await d.close();
  }
});

test('inbound media is stored and served with its content-type; message.received announces its url', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    // A minimal valid PNG (1x1).
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');
    const form = new FormData();
    form.set('from', '+15550000003');
    form.set('message', 'a picture');
    form.set('file', new Blob([png], { type: 'image/png' }), 'dot.png');
    const res = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, body: form });
    t.is(res.status, 200, JSON.stringify(res.body));
    const [req] = await receiver.waitForCount(1);
    const data = req!.json.data as { type: string; caption: string; media: { url: string; mimetype: string; size: number } };
    t.is(data.type, 'image');
    t.is(data.caption, 'a picture');
    t.like(data.media, { mimetype: 'image/png', size: png.length });
    const bytes = await fetch(`${d.url}${data.media.url}`, { headers: { 'x-api-key': inst.key } });
    t.is(bytes.headers.get('content-type'), 'image/png');
    t.deepEqual(Buffer.from(await bytes.arrayBuffer()), png);
    // Without the key: 401; a text message has no media: 404.
    t.is((await fetch(`${d.url}${data.media.url}`)).status, 401);
    const text = await sent(d, inst, {});
    t.is((await d.request('GET', `/api/${inst.id}/messages/${text.messageId}/media`, { key: inst.key })).status, 404);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('addressing: a LID sender without a known phone has from null and is answered through chatId; a group message carries the group', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { lid: '100000000000009', message: 'from a lid' } });
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { lid: '100000000000008', from: '+15550000008', message: 'mapped lid' } });
    await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15550000004', chatId: '120363000000000001@g.us', message: 'in the group' } });
    const reqs = await receiver.waitForCount(3);
    const [lid, mapped, group] = reqs.map((r) => r.json.data) as Array<{ chatId: string; from: string | null; sender: string; isGroup: boolean }>;
    t.like(lid, { chatId: '100000000000009@lid', from: null, sender: '100000000000009@lid', isGroup: false });
    t.like(mapped, { chatId: '15550000008@s.whatsapp.net', from: '+15550000008', sender: '100000000000008@lid' });
    t.like(group, { chatId: '120363000000000001@g.us', from: '+15550000004', sender: '15550000004@s.whatsapp.net', isGroup: true });
    for (const to of [lid!.chatId, group!.chatId]) {
      const r = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { to, message: 'reply' } });
      t.is(r.status, 200, JSON.stringify(r.body));
      t.is(r.body.to, to);
    }
    const groups = (await d.request('GET', `/api/${inst.id}/groups`, { key: inst.key })).body.groups as Array<{ chatId: string }>;
    t.deepEqual(groups.map((g) => g.chatId), ['120363000000000001@g.us']);
    // Exactly one of phone and to.
    t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { message: 'x' } })).body.error.code, 'MISSING_FIELD');
    t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { phone: '+15551234567', to: '15551234567@s.whatsapp.net', message: 'x' } })).body.error.code, 'INVALID_FIELD');
    t.is((await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { to: 'someone@example.com', message: 'x' } })).body.error.code, 'INVALID_FIELD');
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('reactions from the other side arrive as message.reaction and show on the message', async (t) => {
  const receiver = await startReceiver();
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url, { events: ['message.reaction'] });
    const { messageId } = await sent(d, inst, {});
    t.is((await d.request('POST', `/api/${inst.id}/sandbox/react`, { key: inst.key, json: { messageId, emoji: '👍', from: '+15551234567' } })).status, 200);
    const [req] = await receiver.waitForCount(1);
    t.like(req!.json.data, { messageId, emoji: '👍', from: '+15551234567', chatId: '15551234567@s.whatsapp.net' });
    await waitFor(async () => (await d.request('GET', `/api/${inst.id}/messages/${messageId}`, { key: inst.key })).body.reactions?.length === 1, 2000, 'reaction on the message');
  } finally {
    await d.close();
    await receiver.close();
  }
});
