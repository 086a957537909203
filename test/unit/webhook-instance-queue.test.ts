import test from 'ava';
import { InstanceQueue, KEPT_EVENTS, type PendingDelivery } from '../../src/webhooks/instance-queue.js';
import { newDeliveryRecord } from '../../src/webhooks/delivery-record.js';

const pending = (id: string, lane: string, seq: number): PendingDelivery => {
  const state = { ...newDeliveryRecord({ type: 'qr.updated', instanceId: 'inst_test01', timestamp: '', data: { qr: 'x' } }, id, seq, 0), lane };
  return { id, lane, seq, state, dueAt: 0, durable: true, inFlight: false, abort: null, urgent: false };
};

test('only the head of each lane is offered; removing it offers the next', (t) => {
  const q = new InstanceQueue('inst_test01');
  const a1 = pending('a1', 'chat:a', 1);
  const a2 = pending('a2', 'chat:a', 2);
  const b1 = pending('b1', 'chat:b', 3);
  q.add(a1);
  q.add(a2);
  q.add(b1);
  t.deepEqual([...q.heads()].map((d) => d.id), ['a1', 'b1']);
  q.remove(a1);
  t.deepEqual([...q.heads()].map((d) => d.id), ['a2', 'b1']);
  t.is(q.lastSeq, 3);
});

test('the oldest droppable skips deliveries in flight or not yet stored', (t) => {
  const q = new InstanceQueue('inst_test01');
  const a = pending('a', 'chat:a', 1);
  const b = pending('b', 'chat:b', 2);
  const c = pending('c', 'chat:c', 3);
  a.inFlight = true;
  b.durable = false;
  [a, b, c].forEach((d) => q.add(d));
  t.is(q.oldestDroppable()?.id, 'c');
});

test('a new event is kept in memory for its first attempt only, for at most KEPT_EVENTS deliveries of an instance (issue 23: no read-back per delivery, bounded memory)', (t) => {
  const q = new InstanceQueue('inst_test01');
  const event = { type: 'qr.updated' as const, instanceId: 'inst_test01', timestamp: '', data: { qr: 'x' } };
  const ds = Array.from({ length: KEPT_EVENTS + 5 }, (_, i) => pending(`d${i}`, `chat:${i}`, i + 1));
  for (const d of ds) {
    q.add(d);
    q.keepEvent(d, event);
  }
  t.is(ds.filter((d) => d.event).length, KEPT_EVENTS, 'past the bound, events stay in the store only');
  t.is(q.takeEvent(ds[0]!), event);
  t.is(q.takeEvent(ds[0]!), undefined, 'a retry reads the store');
  q.remove(ds[1]!);
  t.is(ds[1]!.event, undefined, 'a removed delivery lets its event go');
  const late = pending('late', 'chat:late', 999);
  q.add(late);
  q.keepEvent(late, event);
  t.is(late.event, event, 'room freed by taken and removed events is used again');
});
