import test from 'ava';
import type { PassThrough } from 'node:stream';
import { LiveEvents } from '../../src/live-events/feature.js';
import type { GatewayEvent } from '../../src/events/types.js';

// Rules guarded (contract part 2, "Live events"): a heartbeat comment keeps idle streams alive; a
// client that stops reading is dropped once its backlog passes the bound (it cannot grow the
// daemon's memory); a client that leaves costs nothing afterwards (no timer left running).

const event = (n: number): GatewayEvent => ({ type: 'message.received', instanceId: 'inst_live0001', timestamp: new Date().toISOString(), data: { messageId: `M${n}`, text: 'x'.repeat(1000) } }) as unknown as GatewayEvent;

function collect(stream: PassThrough): { text: () => string } {
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return { text: () => text };
}

test('idle clients get heartbeat comments; the timer stops with the last client', async (t) => {
  const live = new LiveEvents(5, { heartbeatMs: 20 });
  const stream = live.open('inst_live0001', null);
  const got = collect(stream);
  await new Promise((r) => setTimeout(r, 120));
  t.true((got.text().match(/: ping\n\n/g) ?? []).length >= 2, got.text());
  stream.destroy();
  await new Promise((r) => setImmediate(r));
  t.is(live.count(), 0);
  t.is((live as unknown as { heartbeat: unknown }).heartbeat, null, 'no timer left');
});

test('a client that stops reading is dropped past the backlog bound; a reading one keeps up', async (t) => {
  const live = new LiveEvents(5, { heartbeatMs: 60_000, maxBuffered: 64 * 1024 });
  const slow = live.open('inst_live0001', null); // never read
  const fast = live.open('inst_live0001', null);
  const got = collect(fast);
  let ended = false;
  slow.on('close', () => (ended = true));
  for (let i = 0; i < 200; i++) {
    await live.handle(event(i));
    await new Promise((r) => setImmediate(r));
  }
  t.true(ended, 'the slow client was ended');
  t.is(live.count(), 1);
  t.is((got.text().match(/^event: message\.received$/gm) ?? []).length, 200, 'the reading client got every event');
  live.close();
});

test('a type filter passes only the chosen events', async (t) => {
  const live = new LiveEvents(5, { heartbeatMs: 60_000 });
  const s = live.open('inst_live0001', new Set(['message.status']));
  const got = collect(s);
  await live.handle(event(1));
  await live.handle({ ...event(2), type: 'message.status' } as GatewayEvent);
  await new Promise((r) => setImmediate(r));
  t.deepEqual(got.text().match(/^event: .*$/gm), ['event: message.status']);
  live.close();
});
