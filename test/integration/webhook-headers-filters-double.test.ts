/**
 * Guards issue 24, "Webhooks, part 3" (DESIGN.md), through real Baileys on the protocol double (an
 * in-process daemon): with `filters.ignoreGroups` a group message (sender key, `skmsg`) reaches the
 * gateway but is never queued for the webhook, while a 1:1 message is delivered with the custom
 * headers and a signature that verifies; `onlyChats` given as a phone matches the chat of a contact
 * who writes from their LID (Baileys knows the number: the chat id is the phone JID). The sandbox
 * side of every rule: webhook-headers-filters.test.ts.
 */
import test from 'ava';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import { Webhook } from 'standardwebhooks';
import type { GatewayEvent } from '../../src/events/types.js';
import { waitFor } from '../helpers/daemon.js';
import { startReceiver } from '../helpers/receiver.js';
import { startDoubleDaemon } from '../protocol-double/harness.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const TOKEN = 'Bearer tok_double_0c8a7d2f';

test('through real Baileys: ignoreGroups keeps a group message out, the 1:1 one arrives with the custom headers; onlyChats by phone matches a LID-addressed contact', async (t) => {
  const receiver = await startReceiver();
  const h = await startDoubleDaemon();
  t.teardown(async () => {
    await h.close();
    await receiver.close();
  });
  const seen: GatewayEvent[] = [];
  h.d.core.bus.register({ name: 'test', handle: async (e) => void seen.push(e) });
  const inst = await h.pairedInstance();
  const set = await h.d.request('PUT', `/api/${inst.id}/webhook`, {
    key: inst.key,
    json: { url: receiver.url, secret: SECRET, events: ['message.received'], headers: { Authorization: TOKEN }, filters: { ignoreGroups: true } },
  });
  t.is(set.status, 200, JSON.stringify(set.body));

  const alice = await h.double.contact('+15550300001', { name: 'Alice' });
  const bob = await h.double.contact('+15550300002', { name: 'Bob', addressing: 'lid' });
  const group = h.double.group('Filtered', [alice, bob]);
  const inGroup = await alice.sendText(group.jid, 'to the group');
  await waitFor(() => seen.find((e) => e.type === 'message.received' && e.data.messageId === inGroup), 10_000, 'the group message reached the gateway');
  const direct = await alice.sendText(h.double.accountJid(), 'just to you');
  const [got] = await receiver.waitForCount(1, 10_000);
  t.is(got!.json.data.messageId, direct);
  t.is(got!.json.data.chatId, alice.jid);
  t.is(got!.headers.authorization, TOKEN);
  t.notThrows(() => new Webhook(SECRET).verify(got!.body, got!.headers));
  const queued = (await h.d.request('GET', `/api/${inst.id}/webhook/deliveries`, { key: inst.key })).body.deliveries as unknown[];
  t.is(queued.length, 1, 'the group message was never queued');

  // Only Bob's chat, named by his number: he writes from his LID, Baileys maps it to his phone JID.
  const only = await h.d.request('PUT', `/api/${inst.id}/webhook`, { key: inst.key, json: { filters: { onlyChats: [bob.phone] } } });
  t.deepEqual(only.body.webhook.filters.onlyChats, [bob.jid]);
  const fromAlice = await alice.sendText(h.double.accountJid(), 'not on the list');
  await waitFor(() => seen.find((e) => e.type === 'message.received' && e.data.messageId === fromAlice), 10_000, "alice's second message reached the gateway");
  const fromBob = await bob.sendText(h.double.accountJid(), 'on the list');
  await receiver.waitForCount(2, 10_000);
  t.is(receiver.requests[1]!.json.data.messageId, fromBob);
  t.is(receiver.requests[1]!.json.data.chatId, bob.jid);
  t.is(((await h.d.request('GET', `/api/${inst.id}/webhook/deliveries`, { key: inst.key })).body.deliveries as unknown[]).length, 2, "alice's message was never queued");
  t.deepEqual(h.double.errors, []);
});
