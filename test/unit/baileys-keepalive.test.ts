import test from 'ava';
import { keepAliveIntervalMs } from '../../src/connection/baileys/keepalive.js';

const KEEPALIVE_MIN_MS = 25_000;
const KEEPALIVE_MAX_MS = 35_000;
import { EventEmitter } from 'node:events';
import { S_WHATSAPP_NET, type BinaryNode } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { KEEPALIVE_OFF_MS, KeepaliveClock } from '../../src/connection/baileys/keepalive-clock.js';
import { keepSocketAlive } from '../../src/connection/baileys/keep-socket-alive.js';
import type { SocketLike } from '../../src/connection/baileys/options.js';
import { makeHarness } from './baileys-fake-socket.js';
import { waitFor } from '../helpers/daemon.js';

// Rule (issue "Performance, round 2", item 3): sessions that log in together do not ping WhatsApp
// in the same second forever: each draws its keepalive interval in [25 s, 35 s] (Baileys' 30 s, a
// sixth either side).

test('the interval stays within 25-35 s at both ends of the random draw', (t) => {
  t.is(keepAliveIntervalMs(() => 0), 25_000);
  t.is(keepAliveIntervalMs(() => 0.999_999_9), 35_000);
  t.is(keepAliveIntervalMs(() => 0.5), 30_000);
  t.is(keepAliveIntervalMs(() => 0, 300), 250, 'around another default, the same spread');
  t.is(keepAliveIntervalMs(() => 0.999_999_9, 300), 350);
});

test('sessions get different intervals, spread over the whole range', (t) => {
  const drawn = Array.from({ length: 200 }, () => keepAliveIntervalMs());
  t.true(drawn.every((ms) => Number.isInteger(ms) && ms >= KEEPALIVE_MIN_MS && ms <= KEEPALIVE_MAX_MS));
  t.true(new Set(drawn).size > 150, `${new Set(drawn).size} distinct intervals of 200`);
  t.true(Math.min(...drawn) < 27_000 && Math.max(...drawn) > 33_000, 'the whole range is used');
  t.not(keepAliveIntervalMs(() => 0.1), keepAliveIntervalMs(() => 0.2));
});

test("the connection switches Baileys' own keepalive off on every socket: the daemon's clock keeps it alive", async (t) => {
  const h = await makeHarness();
  t.teardown(() => h.cleanup());
  h.conn.start();
  const s1 = await h.socket(1);
  t.is(s1.config.keepAliveIntervalMs, KEEPALIVE_OFF_MS);
  await s1.close(515);
  const s2 = await h.socket(2);
  t.is(s2.config.keepAliveIntervalMs, KEEPALIVE_OFF_MS);
});

// Rule (issue "Performance, round 2", item 1, idle CPU): the keepalives of every session ride one
// clock, so the pings that fall due within one tick leave in one wake-up of the daemon.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('the clock fires each session at its own interval, all of them on its ticks', async (t) => {
  const clock = new KeepaliveClock(10);
  const fired: Array<{ session: number; tick: number }> = [];
  const stops = [30, 40, 50, 60, 45].map((ms, session) => clock.every(ms, (tick) => fired.push({ session, tick })));
  // Counted in ticks, not waited out in ms: a busy machine makes the ticks late, not fewer.
  await waitFor(() => fired.filter((f) => f.session === 3).length >= 3, 20_000, 'three beats of the 6-tick session');
  for (const stop of stops) stop();
  t.is(clock.sessions, 0);
  // Each session: one beat per interval (rounded to ticks: 45 ms is 5 ticks), on ticks only.
  const everyTicks = [3, 4, 5, 6, 5];
  for (const [session, every] of everyTicks.entries()) {
    const ticks = fired.filter((f) => f.session === session).map((f) => f.tick);
    t.true(ticks.length >= 3, `session ${session}: ${ticks.length} beats`);
    for (let i = 1; i < ticks.length; i++) t.is(ticks[i]! - ticks[i - 1]!, every, `session ${session}`);
  }
  // Sessions due in the same tick fire in it together: 3, 4 and 6 ticks meet every 12 ticks; 5 and 5 always.
  const at = (tick: number) => fired.filter((f) => f.tick === tick).map((f) => f.session).sort();
  t.deepEqual(at(12), [0, 1, 3]);
  t.deepEqual(at(5), [2, 4]);
  const before = fired.length;
  await sleep(100);
  t.is(fired.length, before, 'nothing fires once stopped');
});

test('a blocked event loop: the ticks it missed fire once it is free, and later ticks keep to the grid', async (t) => {
  const clock = new KeepaliveClock(20);
  const ticks: number[] = [];
  const at: number[] = [];
  const t0 = performance.now();
  const stop = clock.every(20, (tick) => {
    ticks.push(tick);
    at.push(performance.now());
  });
  await waitFor(() => ticks.length >= 3, 10_000, 'three ticks');
  const end = performance.now() + 200;
  while (performance.now() < end); // the event loop blocked for 200 ms (10 ticks)
  await waitFor(() => ticks.length >= 20, 10_000, 'twenty ticks');
  stop();
  t.deepEqual(ticks, ticks.map((_, i) => i + 1), 'every tick ran, none twice');
  for (const [i, tick] of ticks.entries()) t.true(at[i]! - t0 >= tick * 20 - 2, `tick ${tick} at ${Math.round(at[i]! - t0)} ms`);
  // A timer rescheduled from each late run (setInterval) would be 200 ms behind by now.
  t.true(at.at(-1)! - t0 < ticks.at(-1)! * 20 + 120, `tick ${ticks.at(-1)} at ${Math.round(at.at(-1)! - t0)} ms`);
});

test('a beat that stops itself, or another, is not fired again', async (t) => {
  const clock = new KeepaliveClock(5);
  let a = 0;
  let b = 0;
  let stopB = (): void => undefined;
  const stopA = clock.every(5, () => {
    a += 1;
    stopA();
    stopB();
  });
  stopB = clock.every(5, () => (b += 1));
  await sleep(60);
  t.is(a, 1);
  t.true(b <= 1);
  t.is(clock.sessions, 0);
});

/** A socket as keepSocketAlive sees it: a WebSocket client that emits `frame`, and a sendNode that records pings. */
function fakeSocket() {
  const ws = Object.assign(new EventEmitter(), { isOpen: true, isClosed: false, isClosing: false });
  const pings: BinaryNode[] = [];
  const ended: Error[] = [];
  const sock = {
    ws,
    sendNode: async (node: BinaryNode) => {
      pings.push(node);
    },
    generateMessageTag: (() => {
      let n = 0;
      return () => `tag.${++n}`;
    })(),
    query: () => Promise.reject(new Error('a ping is sent, not queried')),
    end: async (err: Error | undefined) => {
      if (err) ended.push(err);
    },
  } as unknown as SocketLike;
  return { sock, ws, pings, ended };
}

const log = pino({ level: 'silent' });
const stanza: BinaryNode = { tag: 'success', attrs: {} };

test('a socket is pinged (iq w:p) from its first stanza after the handshake, not before', async (t) => {
  const clock = new KeepaliveClock(5);
  const f = fakeSocket();
  const stop = keepSocketAlive(f.sock, clock, 20, log, 10_000);
  f.ws.emit('frame', new Uint8Array([1, 2, 3])); // the handshake: bytes
  await sleep(60);
  t.is(f.pings.length, 0);
  t.is(clock.sessions, 0);
  f.ws.emit('frame', stanza);
  await waitFor(() => f.pings.length >= 2, 10_000, 'two pings');
  t.true(f.pings.length >= 2, `${f.pings.length} pings`);
  t.like(f.pings[0], { tag: 'iq', attrs: { xmlns: 'w:p', type: 'get', to: S_WHATSAPP_NET } });
  t.deepEqual(f.pings.slice(0, 2).map((p) => p.attrs.id), ['tag.1', 'tag.2'], 'each ping has an id of its own, for the answer');
  stop();
  t.is(clock.sessions, 0);
  t.is(f.ws.listenerCount('frame'), 0);
});

test('a socket that received nothing for its interval + the margin is ended with 408; one that closed is let go', async (t) => {
  const clock = new KeepaliveClock(5);
  const silent = fakeSocket();
  keepSocketAlive(silent.sock, clock, 20, log, 30);
  silent.ws.emit('frame', stanza);
  await waitFor(() => silent.ended.length > 0, 10_000, 'the silent socket ended');
  t.is(silent.ended.length, 1);
  t.is((silent.ended[0] as Error & { output: { statusCode: number } }).output.statusCode, 408);
  t.is(clock.sessions, 0, 'the ended socket left the clock');

  const talking = fakeSocket();
  // Alive three times its interval + margin, by frames alone (the margin is generous: the chatter is a
  // timer, late by however busy the machine is).
  keepSocketAlive(talking.sock, clock, 20, log, 300);
  const chatter = setInterval(() => talking.ws.emit('frame', stanza), 10);
  await sleep(1000);
  clearInterval(chatter);
  t.is(talking.ended.length, 0, 'frames keep it alive');
  talking.ws.isClosed = true;
  await waitFor(() => clock.sessions === 0, 10_000, 'the closed socket off the clock');
  t.is(clock.sessions, 0, 'a closed WebSocket left the clock');
  t.is(talking.ended.length, 0);
});

test('a socket without a WebSocket client to watch (a test double) is not kept alive', (t) => {
  const clock = new KeepaliveClock(5);
  const stop = keepSocketAlive({} as SocketLike, clock, 20, log);
  stop();
  t.is(clock.sessions, 0);
});
