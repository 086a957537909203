/**
 * Guards issue 24's definition of done ("each route and event of part 3 has a test through the
 * double") where the audit (docs/coverage.md) found no test through real Baileys yet, on the
 * protocol double with an in-process daemon:
 * - "Messages the account sends elsewhere" from ANOTHER LINKED DEVICE (not the phone): two
 *   instances linked to one account; what one sends through the gateway reaches the other as
 *   WhatsApp's own-device copy and is `message.sent` there (1:1 and in a group), never on the
 *   sender (test/protocol-double/linked-devices.ts relays the copies as WhatsApp does);
 * - "Webhooks, part 3": `filters.ignoreChats` (a phone and a group) through real Baileys;
 * - "Calls, presence, polls": `POST /presence/subscribe` answers `phone` beside a phone chat and a
 *   LID chat whose number Baileys knows ("`phone` wherever known");
 * - "Contacts, profile, chats": a label deleted on the phone is `label.updated` `deleted`;
 * - every part-3 route that takes JSON refuses an unknown body field (400 INVALID_FIELD naming it)
 *   and a body that is not JSON (400 INVALID_JSON, documented under its 400 in /openapi.json), on
 *   a WhatsApp instance.
 */
import test from 'ava';
import { DEFAULT_CONNECTION_CONFIG } from '@whiskeysockets/baileys';
import type { GatewayEvent } from '../../src/events/types.js';
import { installCdn } from '../protocol-double/cdn.mjs';
import { startDoubleDaemon, type DoubleDaemon } from '../protocol-double/harness.js';
import type { AccountDataSpec } from '../protocol-double/account-data.js';
import { waitFor, type ApiResponse } from '../helpers/daemon.js';
import { setWebhook, startReceiver, type Receiver } from '../helpers/receiver.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

/** The account two instances are linked to (two companions of one phone). */
const SHARED_PHONE = '15550000061';
/** A business account with app state (labels), for the label test. */
const BUSINESS_PHONE = '15550000062';
const SPEC: AccountDataSpec = { contacts: 3, chats: 2, messages: 4, groups: 0, groupSenders: 0 };

type Inst = { id: string; key: string };
let h: DoubleDaemon;
let receiver: Receiver;
let first: Inst;
let second: Inst;
const events: GatewayEvent[] = [];

async function pair(phone: string, options: { platform?: string; accountData?: AccountDataSpec } = {}): Promise<Inst> {
  const inst = await h.createInstance();
  // Only the owner's first instance gets the trial: the others send on premium given here.
  await h.d.request('POST', `/api/instances/${inst.id}/premium`, { secret: h.secret, json: { days: 30 } });
  await h.waitStatus(inst.id, inst.key, 'qr_code_generated');
  const qr = (await h.qrCode(inst.id, inst.key)).body.qr as string;
  const device = await h.double.scan(qr, { phone, ...options });
  await h.waitStatus(inst.id, inst.key, 'connected');
  await h.double.synced(device, 20_000);
  return inst;
}

test.before(async () => {
  h = await startDoubleDaemon({ config: { sending: { minIntervalMs: 0, jitterMs: 0 } } });
  // History syncs and app-state snapshots come from WhatsApp's CDN host: the double's media host.
  await installCdn(h.double.media.hostname);
  h.d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  receiver = await startReceiver();
  first = await pair(SHARED_PHONE);
  second = await pair(SHARED_PHONE);
});

test.after.always(async () => {
  await h?.close();
  await receiver?.close();
});

test.afterEach.always((t) => {
  t.deepEqual(h.double.errors, [], 'nothing the double could not decrypt, no nack, no stanza for nobody');
});

const api = (inst: Inst, method: string, path: string, options: { json?: unknown; body?: string; headers?: Record<string, string> } = {}): Promise<ApiResponse> =>
  h.d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...options });
const of = <T extends GatewayEvent['type']>(type: T, inst: Inst) =>
  events.filter((e): e is Extract<GatewayEvent, { type: T }> => e.type === type && e.instanceId === inst.id);

test.serial('a message sent through one linked device is message.sent on the other device of the account (1:1 and in a group), never on the sender', async (t) => {
  t.is(h.double.devicesOf(h.double.account(SHARED_PHONE)).length, 2, 'two companions of one account');
  const ann = await h.double.contact('+15550610001', { name: 'Ann' });
  const sent = await api(first, 'POST', '/send', { json: { phone: ann.phone, message: 'from the first device' } });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  const id = sent.body.messageId as string;
  t.is((await ann.nextMessage()).text, 'from the first device');
  const copy = await waitFor(() => of('message.sent', second).find((e) => e.data.messageId === id), 10_000, 'message.sent on the second device');
  t.like(copy.data, { chatId: ann.jid, isGroup: false, fromMe: true, type: 'text', text: 'from the first device', from: `+${SHARED_PHONE}` });
  t.true(h.double.linkedDevices.relayed.some((r) => r.id === id), 'WhatsApp handed the second device its copy');
  t.like((await api(second, 'GET', `/messages/${id}`)).body, { fromMe: true, chatId: ann.jid, status: 'sent' });
  t.false(of('message.sent', first).some((e) => e.data.messageId === id), 'the sender does not repeat its own send');
  t.false(of('message.received', second).some((e) => e.data.messageId === id));

  // And back: the second device writes, the first hears it as message.sent.
  const back = await api(second, 'POST', '/send', { json: { phone: ann.phone, message: 'from the second device' } });
  t.is(back.status, 200, JSON.stringify(back.body));
  t.is((await ann.nextMessage()).text, 'from the second device');
  t.like((await waitFor(() => of('message.sent', first).find((e) => e.data.messageId === back.body.messageId), 10_000, 'message.sent on the first device')).data, {
    chatId: ann.jid,
    text: 'from the second device',
  });

  const bob = await h.double.contact('+15550610002', { name: 'Bob' });
  const group = h.double.group('Two devices', [ann, bob], { phone: SHARED_PHONE });
  const inGroup = await api(first, 'POST', '/send', { json: { to: group.jid, message: 'hello group' } });
  t.is(inGroup.status, 200, JSON.stringify(inGroup.body));
  await waitFor(() => bob.messages.find((m) => m.id === inGroup.body.messageId), 10_000, 'Bob got it');
  t.like((await waitFor(() => of('message.sent', second).find((e) => e.data.messageId === inGroup.body.messageId), 10_000, 'the group message.sent')).data, {
    chatId: group.jid,
    isGroup: true,
    fromMe: true,
    text: 'hello group',
  });
});
