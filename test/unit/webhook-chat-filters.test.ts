/**
 * Guards issue 24, "Webhooks, part 3", the rules under the filters and headers (the routes and
 * deliveries: test/integration/webhook-headers-filters*.test.ts): an event's chat is its chatId, and
 * for a 1:1 chat WhatsApp addressed by LID also the phone the event carries; events about no chat
 * pass every filter; exclusions win over onlyChats; a header a hand-edited store holds is sent only
 * if it would pass the API's check.
 */
import test from 'ava';
import type { GatewayEvent } from '../../src/events/types.js';
import { admits, eventChats, normaliseFilters } from '../../src/webhooks/chat-filters.js';
import { checkHeaders, sendableHeaders } from '../../src/webhooks/custom-headers.js';

const at = '2026-01-01T00:00:00.000Z';
const status = (chatId: string, phone?: string): GatewayEvent => ({
  type: 'message.status',
  instanceId: 'inst_abcdef',
  timestamp: at,
  data: { messageId: 'M1', chatId, status: 'delivered', timestamp: at, ...(phone ? { phone } : {}) },
});
const instanceStatus: GatewayEvent = { type: 'instance.status', instanceId: 'inst_abcdef', timestamp: at, data: { from: 'connected', to: 'disconnected', reason: null } };
const labelEdited: GatewayEvent = { type: 'label.updated', instanceId: 'inst_abcdef', timestamp: at, data: { labelId: '1', action: 'edited', name: 'VIP' } };

test('a LID chat matches a filter written with the phone the event carries', (t) => {
  const lidChat = status('200000000000001@lid', '+15551234567');
  t.deepEqual(eventChats(lidChat), ['200000000000001@lid', '15551234567@s.whatsapp.net']);
  t.true(admits(normaliseFilters({ onlyChats: ['+15551234567'] }), lidChat));
  t.false(admits(normaliseFilters({ ignoreChats: ['+15551234567'] }), lidChat));
  t.false(admits(normaliseFilters({ onlyChats: ['+15550000000'] }), lidChat));
  t.true(admits(normaliseFilters({ onlyChats: ['200000000000001@lid'] }), status('200000000000001@lid')), 'a LID whose number is unknown: by its id');
});

test('events about no chat pass every filter; groups follow ignoreGroups; ignoreChats wins over onlyChats', (t) => {
  const strict = normaliseFilters({ ignoreGroups: true, onlyChats: ['+15551234567'], ignoreChats: ['120363041234567890@g.us'] });
  t.true(admits(strict, instanceStatus));
  t.true(admits(strict, labelEdited));
  t.false(admits(normaliseFilters({ ignoreGroups: true, onlyChats: ['120363041234567890@g.us'] }), status('120363041234567890@g.us')));
  t.false(admits(normaliseFilters({ onlyChats: ['+15551234567'], ignoreChats: ['15551234567@s.whatsapp.net'] }), status('15551234567@s.whatsapp.net')));
  t.true(admits(normaliseFilters({ ignoreGroups: true }), status('15551234567@s.whatsapp.net')));
  t.is(normaliseFilters({ ignoreGroups: false, ignoreChats: [] }), undefined, 'filters that let everything through are not stored');
});

test('headers a hand-edited store holds are sent only if the API would take them', (t) => {
  t.deepEqual(
    sendableHeaders([
      { name: 'Authorization', value: 'Bearer x' },
      { name: 'webhook-signature', value: 'v1,forged' },
      { name: 'X-Split', value: 'a\r\nX-Evil: 1' },
      { name: 'Host', value: 'evil.example' },
    ]),
    { Authorization: 'Bearer x' },
  );
  t.deepEqual(checkHeaders({ Authorization: 'Bearer x', 'X-Tab': 'a\tb' }), [
    { name: 'Authorization', value: 'Bearer x' },
    { name: 'X-Tab', value: 'a\tb' },
  ]);
  t.throws(() => checkHeaders({ 'X-Big': 'x'.repeat(4096), 'X-Big2': 'x'.repeat(4096) }), { message: /8203 bytes; at most 8192/ });
});
