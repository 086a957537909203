/**
 * The flow state port's contract (issue 22: one storage seam; the same test on every engine): the
 * flow, open handovers and conversation positions survive a reopen; a save writes what changed and
 * keeps what did not; removal leaves nothing; an unreadable flow is STORE_CORRUPT.
 */
import type { Conversation, Handover, StoredFlow } from '../../src/schemas/flow.js';
import { engineTest } from './engines.js';

const ID = 'inst_flowcontract';
const OTHER = 'inst_flowcontract2';

const flow: StoredFlow = { version: 1, revision: 'abc123', updatedAt: '2026-01-01T00:00:00.000Z', flow: { name: 'support', start: 'hi', nodes: { hi: { type: 'message', text: 'Hello' } } } };

function handover(chatId: string): Handover {
  return { chatId, phone: `+${chatId.split('@')[0]}`, flow: 'support', node: 'agent', openedAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T01:00:00.000Z' };
}

function position(node: string | null): Conversation {
  return { phone: '+15550000001', node, revision: 'abc123', updatedAt: new Date().toISOString() };
}

engineTest('flows: the flow, handovers and positions survive a reopen; saves keep what they did not change', async (t, at) => {
  const s = await at.open();
  t.is(await s.flows.readFlow(ID), null);
  await s.flows.writeFlow(ID, flow);
  const h = new Map<string, Handover>([
    ['15550000001@s.whatsapp.net', handover('15550000001@s.whatsapp.net')],
    ['15550000002@s.whatsapp.net', handover('15550000002@s.whatsapp.net')],
  ]);
  await s.flows.saveHandovers(ID, h, h.keys());
  h.delete('15550000001@s.whatsapp.net');
  await s.flows.saveHandovers(ID, h, ['15550000001@s.whatsapp.net']);
  const c = new Map<string, Conversation>([['a@s.whatsapp.net', position('menu')], ['__proto__', position(null)]]);
  await s.flows.saveConversations(ID, c, c.keys());
  c.set('a@s.whatsapp.net', position('agent'));
  await s.flows.saveConversations(ID, c, ['a@s.whatsapp.net']);
  await s.flows.saveHandovers(OTHER, new Map([['x@g.us', handover('1@s.whatsapp.net')]]), ['x@g.us']);
  await s.close();

  const again = await at.open();
  t.deepEqual(await again.flows.readFlow(ID), flow);
  t.deepEqual([...(await again.flows.readHandovers(ID)).keys()], ['15550000002@s.whatsapp.net']);
  const positions = await again.flows.readConversations(ID);
  t.is(positions.get('a@s.whatsapp.net')?.node, 'agent');
  t.is(positions.get('__proto__')?.node, null, 'any chat id is a plain key');
  t.deepEqual((await again.flows.instancesWithHandovers()).sort(), [ID, OTHER].sort());
  await again.flows.clearFlow(ID);
  t.is(await again.flows.readFlow(ID), null);
});

engineTest('flows: removeInstance leaves nothing of that instance and keeps the others', async (t, at) => {
  const s = await at.open();
  await s.flows.writeFlow(ID, flow);
  await s.flows.saveHandovers(ID, new Map([['a@s.whatsapp.net', handover('a@s.whatsapp.net')]]), ['a@s.whatsapp.net']);
  await s.flows.saveConversations(ID, new Map([['a@s.whatsapp.net', position('menu')]]), ['a@s.whatsapp.net']);
  await s.flows.writeFlow(OTHER, flow);
  await s.flows.removeInstance(ID);
  t.is(await s.flows.readFlow(ID), null);
  t.is((await s.flows.readHandovers(ID)).size, 0);
  t.is((await s.flows.readConversations(ID)).size, 0);
  t.deepEqual(await s.flows.readFlow(OTHER), flow);
});
