/**
 * Guards issue 21 item 3 (the rule behind it): webhooks.concurrency is shared fairly between
 * instances. One instance alone may not take every slot (an eighth stays free for others); with
 * several, each gets an even share, the free slots go to the instance with the fewest attempts in
 * flight, round the instances on ties; a test event goes first, past the share.
 */
import test from 'ava';
import { instanceShare, pickFair, type DueHeads } from '../../src/webhooks/fair-share.js';
import { InstanceQueue, type PendingDelivery } from '../../src/webhooks/instance-queue.js';
import { newDeliveryRecord } from '../../src/webhooks/delivery-record.js';

function heads(instanceId: string, count: number, inFlight = 0, urgent: number[] = []): DueHeads {
  const queue = new InstanceQueue(instanceId);
  queue.inFlight = inFlight;
  const due: PendingDelivery[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${instanceId}-${i}`;
    const state = { ...newDeliveryRecord({ type: 'qr.updated', instanceId, timestamp: '', data: { qr: 'x' } }, id, i + 1, 0), lane: `chat:${i}` };
    due.push({ id, lane: state.lane, seq: i + 1, state, dueAt: i, durable: true, inFlight: false, abort: null, urgent: urgent.includes(i) });
  }
  return { queue, due };
}

const count = (picked: ReturnType<typeof pickFair>) => {
  const by: Record<string, number> = {};
  for (const [q] of picked) by[q.instanceId] = (by[q.instanceId] ?? 0) + 1;
  return by;
};

test('the share: an even split, less an eighth kept for instances that become due', (t) => {
  t.is(instanceShare(64, 1), 56);
  t.is(instanceShare(64, 2), 28);
  t.is(instanceShare(64, 100), 1);
  t.is(instanceShare(2, 1), 2, 'a small concurrency is not cut');
  t.is(instanceShare(16, 1), 14);
});

test('one instance with a backlog takes its share, not every slot', (t) => {
  const picked = pickFair([heads('a', 320)], 64, instanceShare(64, 1), 0);
  t.is(picked.length, 56);
});

test('an instance that becomes due while another holds its whole share gets a slot at once', (t) => {
  // A holds 56 attempts to a receiver that hangs; B's event arrives: 8 slots are free.
  const picked = pickFair([heads('a', 264, 56), heads('b', 1)], 8, instanceShare(64, 2), 0);
  t.deepEqual(count(picked), { b: 1 }, 'A is over its share of 28; B gets its event out');
});

test('free slots go to the instance with the fewest in flight, then round the instances', (t) => {
  const picked = pickFair([heads('a', 10, 3), heads('b', 10, 0), heads('c', 10, 1)], 6, 10, 0);
  t.deepEqual(count(picked), { a: 1, b: 3, c: 2 }, 'everyone at 4 in flight');
  // Ties: the turn decides who goes first, so over turns every instance gets the odd slot.
  const firsts = [0, 1, 2].map((turn) => pickFair([heads('a', 5), heads('b', 5), heads('c', 5)], 1, 10, turn)[0]![0].instanceId);
  t.deepEqual(firsts, ['a', 'b', 'c']);
});

test('within an instance, a test event goes first and past the share; the rest by due time', (t) => {
  const a = heads('a', 5, 2, [4]);
  const picked = pickFair([a], 3, 2, 0);
  t.deepEqual(
    picked.map(([, d]) => d.id),
    ['a-4'],
    'at its share, only the test event starts',
  );
  const b = heads('b', 5, 0, [3]);
  t.deepEqual(
    pickFair([b], 3, 10, 0).map(([, d]) => d.id),
    ['b-3', 'b-0', 'b-1'],
  );
});
