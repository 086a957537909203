import test from 'ava';
import { join } from 'node:path';
import { pino } from 'pino';
import { systemTimers } from '../../src/domain/timers.js';
import type { InboundMessage } from '../../src/schemas/events.js';
import { EventBus } from '../../src/events/bus.js';
import type { GatewayEvent } from '../../src/events/types.js';
import { MessageHub } from '../../src/messages/hub.js';
import { MediaFiles } from '../../src/storage/files/media.js';
import { MessageStore } from '../../src/storage/files/messages/store.js';
import { tempDir } from '../helpers/daemon.js';
import { ManualClock } from '../helpers/manual-time.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

// Rules guarded (issue 14, "inbound media downloaded when it arrives, stored bounded"): a received
// file larger than media.maxBytes is never downloaded (its announced size is checked first) and is
// announced with url null; one that turns out larger than announced is not kept; kept media is
// served until media.keepDays and while the instance stays under media.maxStoreBytes, the oldest
// going first.

const ID = 'inst_hubmedia01';
const DAY = 86_400_000;

async function hub(options: { maxBytes: number; keepDays?: number; maxStoreBytes?: number }) {
  const dir = await tempDir('gw-hub-');
  const clock = new ManualClock();
  const logger = pino({ level: 'silent' });
  const media = new MediaFiles(join(dir, 'media'), { keepMs: (options.keepDays ?? 7) * DAY, maxBytesPerInstance: options.maxStoreBytes ?? 1_000_000 }, UNGUARDED);
  const store = new MessageStore({ guard: UNGUARDED, root: join(dir, 'messages'), history: { enabled: true, days: 30, maxMessagesPerChat: 200 }, media, clock, timers: systemTimers, logger });
  const bus = new EventBus(logger);
  const events: GatewayEvent[] = [];
  bus.register({ name: 'test', handle: async (e) => void events.push(e) });
  return { h: new MessageHub({ store, media, bus, clock, logger, maxMediaBytes: options.maxBytes }), media, clock, events, store };
}

function image(id: string, now: number): InboundMessage {
  return { messageId: id, chatId: '15550000001@s.whatsapp.net', isGroup: false, sender: '15550000001@s.whatsapp.net', from: '+15550000001', type: 'image', timestamp: new Date(now).toISOString() };
}

test('a file announced over media.maxBytes is never downloaded and is announced with url null', async (t) => {
  const { h, events, store } = await hub({ maxBytes: 100 });
  let downloads = 0;
  await h.received(ID, image('BIG', Date.now()), { mimetype: 'image/png', declaredSize: 5_000_000, download: async () => (downloads += 1, new Uint8Array(5_000_000)) });
  t.is(downloads, 0);
  const data = (events[0]!.data as { media: unknown }).media;
  t.deepEqual(data, { mimetype: 'image/png', size: 5_000_000, url: null });
  await store.stop();
});

test('a file larger than it announced is downloaded once but not kept', async (t) => {
  const { h, events, media, store } = await hub({ maxBytes: 100 });
  await h.received(ID, image('LIAR', Date.now()), { mimetype: 'image/png', declaredSize: 10, download: async () => new Uint8Array(500) });
  t.like((events[0]!.data as { media: object }).media, { size: 500, url: null });
  t.is(await media.get(ID, 'LIAR'), null);
  await store.stop();
});

test('kept media is served until keepDays, and the oldest go first past maxStoreBytes', async (t) => {
  const { h, events, media, clock, store } = await hub({ maxBytes: 1000, keepDays: 7, maxStoreBytes: 250 });
  for (const id of ['A', 'B', 'C']) {
    await h.received(ID, image(id, clock.now()), { mimetype: 'image/png', declaredSize: 100, download: async () => new Uint8Array(100).fill(1) });
    clock.advance(1000);
  }
  t.true(events.every((e) => typeof (e.data as { media: { url: unknown } }).media.url === 'string'), 'each announced with its url');
  t.is(await media.get(ID, 'A', clock.now()), null, '300 bytes > 250: the oldest went');
  t.truthy(await media.get(ID, 'B', clock.now()));
  t.truthy(await media.get(ID, 'C', clock.now()));
  clock.advance(7 * DAY);
  t.is(await media.get(ID, 'B', clock.now()), null, 'expired at once, before any sweep');
  await media.sweep(clock.now());
  t.is(await media.get(ID, 'C'), null, 'and the sweep removes the files');
  await store.stop();
});
