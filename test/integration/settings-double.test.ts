/**
 * Guards issue 24, contract part 3 "Instance settings and proxy" (and `calls.autoReject` of "Calls,
 * presence, polls"), through real Baileys on the protocol double (an in-process daemon):
 * calls.autoReject rejects the call at WhatsApp and the caller gets rejectMessage; autoRead sends
 * WhatsApp's read receipt; ignoreGroups keeps a group message and a group change out of events and
 * history while Baileys still acknowledges them; ignoreStatus keeps a viewer's receipt of a status
 * post out; alwaysOnline sends `available` now and at the next connect, `unavailable` when turned
 * off; syncFullHistory reaches WhatsApp at the next connect (Baileys' `requireFullSync` in the
 * registration's device props).
 */
import test from 'ava';
import { DEFAULT_CONNECTION_CONFIG, proto } from '@whiskeysockets/baileys';
import type { GatewayEvent } from '../../src/events/types.js';
import { waitFor } from '../helpers/daemon.js';
import type { Contact } from '../protocol-double/contact.js';
import { startDoubleDaemon, type DoubleDaemon } from '../protocol-double/harness.js';

// Baileys never clears the timers of queries pending when a socket ends (60 s by default).
DEFAULT_CONNECTION_CONFIG.defaultQueryTimeoutMs = 5000;

let h: DoubleDaemon;
let inst: { id: string; key: string };
const events: GatewayEvent[] = [];

test.before(async () => {
  h = await startDoubleDaemon({ config: { sending: { minIntervalMs: 0, jitterMs: 0 } } });
  h.d.core.bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  inst = await h.pairedInstance();
});

test.after.always(async () => {
  await h?.close();
});

test.afterEach.always((t) => {
  t.deepEqual(h.double.errors, [], 'nothing the double could not decrypt, no nack');
});

const api = (method: string, path: string, json?: unknown) => h.d.request(method, `/api/${inst.id}${path}`, { key: inst.key, ...(json !== undefined ? { json } : {}) });
async function settings(json: unknown): Promise<void> {
  const res = await api('PUT', '/settings', json);
  if (res.status !== 200) throw new Error(`PUT /settings: ${res.status} ${JSON.stringify(res.body)}`);
}
const find = <T extends GatewayEvent['type']>(type: T, match: (e: Extract<GatewayEvent, { type: T }>) => boolean) =>
  events.find((e): e is Extract<GatewayEvent, { type: T }> => e.type === type && match(e as Extract<GatewayEvent, { type: T }>));
const waitEvent = <T extends GatewayEvent['type']>(type: T, match: (e: Extract<GatewayEvent, { type: T }>) => boolean) => waitFor(() => find(type, match), 10_000, `a ${type} event`);
/** Everything the double sent was acknowledged (so Baileys processed it, and the hooks saw it). */
const settled = () => waitFor(() => h.double.pending().length === 0 || undefined, 10_000, 'everything acknowledged');

test.serial('calls.autoReject: the call is rejected at WhatsApp and the caller gets rejectMessage', async (t) => {
  await settings({ calls: { autoReject: true, rejectMessage: 'No calls, please write.' } });
  t.teardown(() => settings({ calls: { autoReject: false, rejectMessage: null } }));
  const alice = await h.double.contact('+15550400001', { name: 'Alice' });
  const callId = h.double.callOps.offer(alice);
  const reject = await waitFor(() => h.double.callOps.rejects.find((r) => r.callId === callId), 10_000, 'the reject at the double');
  t.is(reject.callCreator, alice.jid);
  t.truthy(find('call.received', (e) => e.data.callId === callId), 'call.received is still published');
  const text = await alice.nextMessage();
  t.is(text.text, 'No calls, please write.');
});

test.serial('autoRead: a received message gets WhatsApp\'s read receipt; off, only the delivery one', async (t) => {
  const bea = await h.double.contact('+15550400002', { name: 'Bea' });
  const unread = await bea.sendText(h.double.accountJid(), 'before');
  await waitEvent('message.received', (e) => e.data.messageId === unread);
  await settings({ autoRead: true });
  t.teardown(() => settings({ autoRead: false }));
  const id = await bea.sendText(h.double.accountJid(), 'read me');
  await waitFor(() => bea.receiptsFromGateway.find((r) => r.type === 'read' && r.ids.includes(id)), 10_000, 'the read receipt');
  t.false(bea.receiptsFromGateway.some((r) => r.type === 'read' && r.ids.includes(unread)));
});

test.serial('ignoreGroups: a group message and a group change are acknowledged but become no event and no history; 1:1 still arrives', async (t) => {
  const cleo = await h.double.contact('+15550400003', { name: 'Cleo' });
  const dora = await h.double.contact('+15550400004', { name: 'Dora' });
  const group = h.double.group('Quiet', [cleo, dora], { admins: [cleo] });
  const shown = await cleo.sendText(group.jid, 'before');
  await waitEvent('message.received', (e) => e.data.messageId === shown);
  await settings({ ignoreGroups: true });
  t.teardown(() => settings({ ignoreGroups: false }));
  const count = events.length;
  const hidden = await cleo.sendText(group.jid, 'in the group');
  await h.double.groupOps.setSubject(group, 'Still quiet', cleo);
  const direct = await dora.sendText(h.double.accountJid(), 'to you');
  await waitEvent('message.received', (e) => e.data.messageId === direct);
  await settled();
  const later = events.slice(count);
  t.deepEqual(later.map((e) => e.type), ['message.received']);
  t.is((await api('GET', `/messages/${hidden}`)).status, 404, 'not in history');

  await settings({ ignoreGroups: false });
  const again = await cleo.sendText(group.jid, 'heard again');
  await waitEvent('message.received', (e) => e.data.messageId === again);
  t.pass();
});

/**
 * A contact viewed a status post: WhatsApp's receipt from `status@broadcast` naming the viewer as
 * `participant` (the double's contact.receipt() leaves it out for a chat that is not a group, and
 * Baileys drops a status receipt without one).
 */
function viewed(viewer: Contact, id: string): void {
  const device = h.double.lastDevice();
  if (!device) throw new Error('no linked device');
  h.double.deliver(device, { tag: 'receipt', attrs: { from: 'status@broadcast', participant: viewer.jid, id, type: 'read', t: String(Math.floor(Date.now() / 1000)) } });
}

test.serial("ignoreStatus: a viewer's receipt of a status post is no event; off, it is", async (t) => {
  const eve = await h.double.contact('+15550400005', { name: 'Eve' });
  const first = await api('POST', '/status', { text: 'Open today', audience: [eve.phone] });
  t.is(first.status, 200, JSON.stringify(first.body));
  const seen = await eve.nextMessage();
  t.is(seen.chat, 'status@broadcast');
  viewed(eve, seen.id);
  await waitEvent('message.status', (e) => e.data.messageId === first.body.messageId && e.data.status === 'read');

  await settings({ ignoreStatus: true });
  t.teardown(() => settings({ ignoreStatus: false }));
  const second = await api('POST', '/status', { text: 'Closed tomorrow', audience: [eve.phone] });
  const seen2 = await eve.nextMessage();
  const count = events.length;
  viewed(eve, seen2.id);
  await settled();
  t.false(events.slice(count).some((e) => e.type === 'message.status' && e.data.messageId === second.body.messageId));
  t.is((await api('GET', `/messages/${second.body.messageId as string}`)).body.status, 'sent');
});

test.serial('alwaysOnline: available at once and at the next connect, unavailable when turned off', async (t) => {
  const fay = await h.double.contact('+15550400006', { name: 'Fay' });
  const states = () => h.double.presenceOps.seen(fay).map((p) => p.state);
  await settings({ alwaysOnline: true });
  await waitFor(() => (states().length === 1 ? true : undefined), 10_000, 'available');
  t.is((await api('POST', '/restart')).status, 200);
  await h.waitStatus(inst.id, inst.key, 'connected');
  await waitFor(() => (states().length === 2 ? true : undefined), 10_000, 'available at the connect').catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(states())}`);
  });
  await settings({ alwaysOnline: false });
  await waitFor(() => (states().length === 3 ? true : undefined), 10_000, 'unavailable');
  t.deepEqual(states(), ['available', 'available', 'unavailable']);
});

test.serial('syncFullHistory reaches WhatsApp at the next connect: the registration asks for the full history only after it is set', async (t) => {
  const fresh = await h.createInstance();
  await h.waitStatus(fresh.id, fresh.key, 'qr_code_generated');
  const requireFullSync = (i: number): boolean | null | undefined => {
    const pairing = h.double.registrations()[i]?.payload?.devicePairingData;
    return pairing?.deviceProps ? proto.DeviceProps.decode(pairing.deviceProps).requireFullSync : undefined;
  };
  const before = h.double.registrations().length;
  t.false(requireFullSync(before - 1), 'the default: no full history');
  const set = await h.d.request('PUT', `/api/instances/${fresh.id}/settings`, { secret: h.secret, json: { syncFullHistory: true } });
  t.is(set.status, 200);
  t.is(h.double.registrations().length, before, 'nothing happens before the next connect');
  await h.d.request('POST', `/api/${fresh.id}/restart`, { key: fresh.key });
  await waitFor(() => (h.double.registrations().length > before ? true : undefined), 10_000, 'a new registration');
  t.true(requireFullSync(h.double.registrations().length - 1));
  await h.d.request('DELETE', `/api/instances/${fresh.id}`, { secret: h.secret });
});
