import test from 'ava';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

// Contract part 2 "Sending, beyond text and media" on sandbox instances: every send kind costs one
// credit (exactly, also under concurrency); reactions, edits, deletes, read marks, presence and
// lookups are free; bad input is a clear 400; a disconnected instance is a 503.

async function creditsInstance(d: TestDaemon, credits: number) {
  // The default owner's first instance gets the trial: take it, so the next one pays with credits.
  await d.createInstance({ sandbox: true });
  const inst = await d.connectedSandbox({ credits });
  return inst;
}

const chat = '15551234567@s.whatsapp.net';

test('location, contact and poll sends cost one credit each and reach the sandbox as sent', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await creditsInstance(d, 3);
    const loc = await d.request('POST', `/api/${inst.id}/send-location`, { key: inst.key, json: { to: chat, latitude: 52.52, longitude: 13.405, name: 'Shop' } });
    t.is(loc.status, 200, JSON.stringify(loc.body));
    t.is(loc.body.quotaRemaining, '2');
    const card = await d.request('POST', `/api/${inst.id}/send-contact`, { key: inst.key, json: { to: chat, contacts: [{ name: 'Support; Team', phone: '+15557654321' }] } });
    t.is(card.body.quotaRemaining, '1');
    const poll = await d.request('POST', `/api/${inst.id}/send-poll`, { key: inst.key, json: { to: chat, question: 'Lunch?', options: ['Pizza', 'Sushi'], multiple: true } });
    t.is(poll.body.quotaRemaining, '0');
    const refused = await d.request('POST', `/api/${inst.id}/send-poll`, { key: inst.key, json: { to: chat, question: 'Again?', options: ['a', 'b'] } });
    t.is(refused.status, 403);
    t.is(refused.body.error.code, 'QUOTA_EXHAUSTED');
    const log = (await d.request('GET', `/api/${inst.id}/sandbox/sent`, { key: inst.key })).body.messages as Array<Record<string, unknown>>;
    t.deepEqual(log.map((m) => m.type), ['location', 'contact', 'poll']);
    t.like(log[0], { location: { latitude: 52.52, longitude: 13.405, name: 'Shop' } });
    t.regex(String((log[1]!.contacts as Array<{ vcard: string }>)[0]!.vcard), /FN:Support\\; Team\nTEL;type=CELL;type=VOICE;waid=15557654321:\+15557654321/);
    t.like(log[2], { poll: { question: 'Lunch?', options: ['Pizza', 'Sushi'], multiple: true } });
    const stored = (await d.request('GET', `/api/${inst.id}/messages/${poll.body.messageId}`, { key: inst.key })).body;
    t.like(stored, { type: 'poll', poll: { question: 'Lunch?' } });
  } finally {
    await d.close();
  }
});

test('bad input on the new send routes is a clear 400 (ranges, counts, unknown fields)', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
      ['send-location', { to: chat, latitude: 91, longitude: 0 }, 'INVALID_FIELD', /latitude/],
      ['send-location', { to: chat, latitude: 0, longitude: -181 }, 'INVALID_FIELD', /longitude/],
      ['send-location', { to: chat, longitude: 0 }, 'MISSING_FIELD', /latitude/],
      ['send-contact', { to: chat, contacts: [] }, 'INVALID_FIELD', /contacts/],
      ['send-contact', { to: chat, contacts: Array.from({ length: 11 }, (_, i) => ({ name: `n${i}`, phone: '+15551234567' })) }, 'INVALID_FIELD', /contacts/],
      ['send-contact', { to: chat, contacts: [{ name: 'x', phone: '12345' }] }, 'INVALID_PHONE', /phone/],
      ['send-poll', { to: chat, question: 'q', options: ['only one'] }, 'INVALID_FIELD', /options/],
      ['send-poll', { to: chat, question: 'q', options: Array.from({ length: 13 }, (_, i) => `o${i}`) }, 'INVALID_FIELD', /options/],
      ['send-poll', { to: chat, question: 'q', options: ['same', 'same'] }, 'INVALID_FIELD', /options/],
      ['send-poll', { to: chat, question: 'q', options: ['a', 'b'], extra: 1 }, 'INVALID_FIELD', /extra: unknown field/],
      ['react', { chatId: chat, messageId: 'X1', emoji: '👍', more: true }, 'INVALID_FIELD', /more/],
      ['react', { chatId: 'not-a-chat', messageId: 'X1', emoji: '👍' }, 'INVALID_FIELD', /chatId/],
      ['presence', { chatId: chat, state: 'dancing' }, 'INVALID_FIELD', /state/],
      ['read', { chatId: chat, messageIds: [] }, 'INVALID_FIELD', /messageIds/],
      ['contacts/check', { phones: [] }, 'INVALID_FIELD', /phones/],
      ['contacts/check', { phones: Array.from({ length: 51 }, (_, i) => `+1555123${String(i).padStart(4, '0')}`) }, 'INVALID_FIELD', /phones/],
    ];
    for (const [route, body, code, message] of cases) {
      const res = await d.request('POST', `/api/${inst.id}/${route}`, { key: inst.key, json: body });
      t.is(res.status, 400, `${route} ${JSON.stringify(body).slice(0, 80)}`);
      t.is(res.body.error.code, code, `${route}: ${res.body.error.message}`);
      t.regex(res.body.error.message, message);
    }
  } finally {
    await d.close();
  }
});

test('reactions, edits, deletes, read marks and presence are free and reach the connection', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await creditsInstance(d, 1);
    const sent = await d.request('POST', `/api/${inst.id}/send`, { key: inst.key, json: { to: chat, message: 'typo' } });
    t.is(sent.body.quotaRemaining, '0');
    const id = sent.body.messageId as string;
    t.is((await d.request('POST', `/api/${inst.id}/react`, { key: inst.key, json: { chatId: chat, messageId: id, emoji: '🎉' } })).status, 200);
    t.is((await d.request('POST', `/api/${inst.id}/messages/${id}/edit`, { key: inst.key, json: { chatId: chat, message: 'fixed' } })).status, 200);
    t.is((await d.request('POST', `/api/${inst.id}/presence`, { key: inst.key, json: { chatId: chat, state: 'typing' } })).status, 200);
    t.is((await d.request('DELETE', `/api/${inst.id}/messages/${id}?chatId=${chat}`, { key: inst.key })).status, 200);
    const actions = (await d.request('GET', `/api/${inst.id}/sandbox/actions`, { key: inst.key })).body.actions as Array<{ action: string }>;
    t.deepEqual(actions.map((a) => a.action), ['react', 'edit', 'presence', 'delete']);
    const stored = (await d.request('GET', `/api/${inst.id}/messages/${id}`, { key: inst.key })).body;
    t.like(stored, { deleted: true, edited: true });
    const status = (await d.request('GET', `/api/${inst.id}/status`, { key: inst.key })).body;
    t.is(status.quotaRemaining, '0', 'none of them cost a credit');
    // A message someone else sent cannot be edited.
    const inbound = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15551234567', message: 'theirs' } });
    const edit = await d.request('POST', `/api/${inst.id}/messages/${inbound.body.messageId}/edit`, { key: inst.key, json: { chatId: chat, message: 'mine now' } });
    t.is(edit.status, 400);
  } finally {
    await d.close();
  }
});

test('contacts/check and groups on a sandbox; a disconnected instance answers 503 to actions', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    const check = (await d.request('POST', `/api/${inst.id}/contacts/check`, { key: inst.key, json: { phones: ['+15551234567', '+4915112345678'] } })).body;
    t.deepEqual(check.results, [
      { phone: '+15551234567', exists: true, chatId: '15551234567@s.whatsapp.net' },
      { phone: '+4915112345678', exists: true, chatId: '4915112345678@s.whatsapp.net' },
    ]);
    t.is((await d.request('GET', `/api/${inst.id}/groups/120363000000000009@g.us`, { key: inst.key })).status, 404);
    t.is((await d.request('GET', `/api/${inst.id}/groups/15551234567@s.whatsapp.net`, { key: inst.key })).status, 400);
    await d.request('POST', `/api/${inst.id}/sandbox/disconnect`, { key: inst.key });
    for (const [method, path, json] of [
      ['POST', 'react', { chatId: chat, messageId: 'X1', emoji: '👍' }],
      ['POST', 'presence', { chatId: chat, state: 'typing' }],
      ['POST', 'contacts/check', { phones: ['+15551234567'] }],
      ['GET', 'groups', undefined],
    ] as const) {
      const res = await d.request(method, `/api/${inst.id}/${path}`, { key: inst.key, ...(json ? { json } : {}) });
      t.is(res.status, 503, path);
      t.is(res.body.error.code, 'CONNECTION_NOT_READY');
    }
  } finally {
    await d.close();
  }
});

test('credits are exact under concurrency across every send kind: 20 parallel sends against 10 credits', async (t) => {
  const d = await startTestDaemon();
  try {
    const inst = await creditsInstance(d, 10);
    const kinds: Array<[string, Record<string, unknown>]> = [
      ['send', { to: chat, message: 'm' }],
      ['send-location', { to: chat, latitude: 1, longitude: 2 }],
      ['send-contact', { to: chat, contacts: [{ name: 'a', phone: '+15551234567' }] }],
      ['send-poll', { to: chat, question: 'q', options: ['a', 'b'] }],
    ];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const [route, body] = kinds[i % kinds.length]!;
        return d.request('POST', `/api/${inst.id}/${route}`, { key: inst.key, json: body });
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    t.is(ok.length, 10);
    t.true(results.filter((r) => r.status !== 200).every((r) => r.status === 403 && r.body.error.code === 'QUOTA_EXHAUSTED'));
    t.deepEqual(ok.map((r) => Number(r.body.quotaRemaining)).sort((a, b) => a - b), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    t.is(((await d.request('GET', `/api/${inst.id}/sandbox/sent`, { key: inst.key })).body.messages as unknown[]).length, 10);
  } finally {
    await d.close();
  }
});

test('bad input on the lifecycle, edit, sandbox and delivery routes is a clear 400 naming the field', async (t) => {
  // Issue 15: "bad input on each new route is a clear 400 (ranges, lengths, counts, unknown fields)".
  const d = await startTestDaemon();
  try {
    const inst = await d.connectedSandbox();
    const cases: Array<[string, string, Record<string, unknown> | string | undefined, string, RegExp]> = [
      ['POST', 'pairing-code', {}, 'MISSING_FIELD', /phone/],
      ['POST', 'pairing-code', { phone: '12345' }, 'INVALID_PHONE', /phone/],
      ['POST', 'pairing-code', { phone: '+15551234567', extra: 1 }, 'INVALID_FIELD', /extra/],
      ['POST', 'messages/X1/edit', { chatId: chat }, 'MISSING_FIELD', /message/],
      ['POST', 'messages/X1/edit', { chatId: chat, message: '' }, 'INVALID_FIELD', /message/],
      ['POST', 'messages/X1/edit', { chatId: chat, message: 'x'.repeat(70_000) }, 'INVALID_FIELD', /message/],
      ['DELETE', 'messages/X1', undefined, 'MISSING_FIELD', /chatId/],
      ['DELETE', 'messages/X1?chatId=nope', undefined, 'INVALID_FIELD', /chatId/],
      ['POST', 'sandbox/receipt', { messageId: 'X1', status: 'sent' }, 'INVALID_FIELD', /status/],
      ['POST', 'sandbox/receipt', { status: 'read' }, 'MISSING_FIELD', /messageId/],
      ['POST', 'sandbox/react', { messageId: 'X1', emoji: '👍', from: 'someone' }, 'INVALID_PHONE', /from/],
      ['GET', 'webhook/deliveries?status=lost', undefined, 'INVALID_FIELD', /status/],
      ['GET', 'webhook/deliveries?limit=0', undefined, 'INVALID_FIELD', /limit/],
      ['GET', 'webhook/deliveries?limit=1001', undefined, 'INVALID_FIELD', /limit/],
      ['GET', 'chats/nope/messages', undefined, 'INVALID_FIELD', /chatId/],
      ['GET', `chats/${chat}/messages?limit=-1`, undefined, 'INVALID_FIELD', /limit/],
      ['PUT', 'webhook', { url: 'https://example.com/hook', events: ['message.nope'] }, 'INVALID_FIELD', /events/],
    ];
    for (const [method, route, body, code, message] of cases) {
      const res = await d.request(method, `/api/${inst.id}/${route}`, { key: inst.key, ...(body === undefined ? {} : { json: body }) });
      const what = `${method} ${route} ${JSON.stringify(body ?? '').slice(0, 60)}`;
      t.is(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
      t.is(res.body.error?.code, code, `${what}: ${res.body.error?.message}`);
      t.regex(String(res.body.error?.message), message, what);
    }
  } finally {
    await d.close();
  }
});
