import test from 'ava';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ManualClock, ManualTimers } from '../helpers/manual-time.js';
import type { FlowsFeature } from '../../src/flows/feature.js';
import type { GatewayEvent, HandoverEvent } from '../../src/events/types.js';
import { startTestDaemon, waitFor, type TestDaemon, type TestDaemonOptions } from '../helpers/daemon.js';
import { exampleFlow } from '../../src/flows/example.js';

const SUPPORT = exampleFlow();
const WELCOME = 'Hi Ann! 1 = opening hours, 2 = talk to a person';
const ANN = '+15551234567';

interface Bot {
  d: TestDaemon;
  flows: FlowsFeature;
  id: string;
  key: string;
  events: GatewayEvent[];
  /** An inbound message from `from`; resolves once the bot has handled it. */
  say(message: string, from?: string, name?: string): Promise<void>;
  /** Texts the instance sent, oldest first. */
  sent(): Promise<string[]>;
  close(): Promise<void>;
}

async function startBot(options: TestDaemonOptions & { instance?: Record<string, unknown>; flow?: unknown } = {}): Promise<Bot> {
  const d = await startTestDaemon(options);
  const { id, key } = await d.connectedSandbox(options.instance);
  const events: GatewayEvent[] = [];
  d.core.bus.register({ name: 'capture', handle: async (e) => void events.push(e) });
  const bot: Bot = {
    d,
    flows: d.flows,
    id,
    key,
    events,
    async say(message, from = ANN, name = 'Ann') {
      const received = () => events.filter((e) => e.type === 'message.received').length;
      const before = received();
      const res = await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from, message, name } });
      if (res.status !== 200) throw new Error(`inbound failed: ${res.status} ${JSON.stringify(res.body)}`);
      // The flows see the message once the bus has it (it may still be on its way when the route answers).
      await waitFor(() => received() > before, 10_000, 'the message on the event bus');
      await d.flows.idle();
    },
    async sent() {
      const res = await d.request('GET', `/api/${id}/sandbox/sent`, { key });
      return (res.body.messages as Array<{ message: string }>).map((m) => m.message);
    },
    close: () => d.close(),
  };
  if (options.flow !== undefined) {
    const put = await d.request('PUT', `/api/${id}/flow`, { key, json: options.flow });
    if (put.status !== 200) throw new Error(`flow set failed: ${put.status} ${JSON.stringify(put.body)}`);
  }
  return bot;
}

test('the example flow end to end: inbound -> replies in sandbox/sent', async (t) => {
  const bot = await startBot();
  try {
    const put = await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: SUPPORT });
    t.is(put.status, 200);
    t.is(put.body.success, true);
    t.is(put.body.flow.name, 'support');
    await bot.say('hello');
    t.deepEqual(await bot.sent(), [WELCOME]);
    const first = (await bot.d.request('GET', `/api/${bot.id}/sandbox/sent`, { key: bot.key })).body.messages[0];
    t.is(first.phone, ANN);
    await bot.say('what?');
    await bot.say(' 1 ');
    t.deepEqual(await bot.sent(), [WELCOME, WELCOME, 'Mon-Fri 9-17.']);
    // The flow ended: the next message starts it again.
    await bot.say('thanks');
    t.deepEqual((await bot.sent()).slice(3), [WELCOME]);
  } finally {
    await bot.close();
  }
});

test('each chat has its own position and messages of one chat are handled in order', async (t) => {
  const bot = await startBot({ flow: SUPPORT });
  try {
    // Posted back to back without waiting for the bot: "1" must see the position "hi" left.
    for (const m of ['hi', '1', 'hi', '1']) {
      const res = await bot.d.request('POST', `/api/${bot.id}/sandbox/inbound`, { key: bot.key, json: { from: ANN, message: m, name: 'Ann' } });
      t.is(res.status, 200);
    }
    await bot.say('hey', '+15557654321', 'Bob');
    await bot.flows.idle();
    const res = await bot.d.request('GET', `/api/${bot.id}/sandbox/sent`, { key: bot.key });
    const mine = (res.body.messages as Array<{ phone: string; message: string }>).filter((m) => m.phone === ANN).map((m) => m.message);
    t.deepEqual(mine, [WELCOME, 'Mon-Fri 9-17.', WELCOME, 'Mon-Fri 9-17.']);
    const bobs = (res.body.messages as Array<{ phone: string; message: string }>).filter((m) => m.phone === '+15557654321').map((m) => m.message);
    t.deepEqual(bobs, ['Hi Bob! 1 = opening hours, 2 = talk to a person']);
  } finally {
    await bot.close();
  }
});

test('GET /flow is 404 until set, DELETE is idempotent and silences the bot', async (t) => {
  const bot = await startBot();
  try {
    const none = await bot.d.request('GET', `/api/${bot.id}/flow`, { key: bot.key });
    t.is(none.status, 404);
    t.deepEqual(none.body, { success: false, error: { code: 'NOT_FOUND', message: 'no flow is set for this instance' } });
    await bot.say('hello');
    t.deepEqual(await bot.sent(), []);
    t.is((await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: SUPPORT })).status, 200);
    const got = await bot.d.request('GET', `/api/${bot.id}/flow`, { key: bot.key });
    t.is(got.status, 200);
    t.deepEqual(got.body.flow, SUPPORT);
    t.is(typeof got.body.updatedAt, 'string');
    const del = await bot.d.request('DELETE', `/api/${bot.id}/flow`, { key: bot.key });
    t.deepEqual(del.body, { success: true, instanceId: bot.id, deleted: true });
    const again = await bot.d.request('DELETE', `/api/${bot.id}/flow`, { key: bot.key });
    t.deepEqual(again.body, { success: true, instanceId: bot.id, deleted: false });
    await bot.say('hello');
    t.deepEqual(await bot.sent(), []);
  } finally {
    await bot.close();
  }
});

test('PUT /flow refuses a bad flow with 400 INVALID_FIELD naming the node; auth comes first', async (t) => {
  const bot = await startBot();
  try {
    const bad = { ...SUPPORT, nodes: { ...SUPPORT.nodes, route: { type: 'condition', rules: [{ equals: '1', next: 'nowhere' }] } } };
    const res = await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: bad });
    t.is(res.status, 400);
    t.is(res.body.success, false);
    t.is(res.body.error.code, 'INVALID_FIELD');
    t.regex(res.body.error.message, /node "route": rules\[0\]\.next: no node named "nowhere"/);
    const noKey = await bot.d.request('PUT', `/api/${bot.id}/flow`, { json: bad });
    t.is(noKey.status, 401);
    t.is(noKey.body.error.code, 'UNAUTHORIZED');
    const notJson = await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, body: 'x', headers: { 'content-type': 'text/plain' } });
    t.is(notJson.status, 415);
    const array = await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: [] });
    t.is(array.status, 400);
    // The refused flow did not replace anything.
    t.is((await bot.d.request('GET', `/api/${bot.id}/flow`, { key: bot.key })).status, 404);
  } finally {
    await bot.close();
  }
});

test('handover: text, conversation.handover event, silence, list, release by API', async (t) => {
  const bot = await startBot({ flow: SUPPORT });
  try {
    await bot.say('hi');
    await bot.say('Agent');
    t.deepEqual((await bot.sent()).slice(1), ['A colleague will answer you here shortly.']);
    const handovers = bot.events.filter((e): e is HandoverEvent => e.type === 'conversation.handover');
    t.is(handovers.length, 1);
    t.like(handovers[0]!, { instanceId: bot.id, data: { phone: ANN, chatId: '15551234567@s.whatsapp.net', flow: 'support', node: 'agent', reason: 'flow', fromName: 'Ann', text: 'Agent' } });
    await bot.say('hello? anyone?');
    await bot.say('1');
    t.is((await bot.sent()).length, 2, 'the bot stays silent during a handover');

    const list = await bot.d.request('GET', `/api/${bot.id}/handovers`, { key: bot.key });
    t.is(list.status, 200);
    t.is(list.body.handovers.length, 1);
    t.like(list.body.handovers[0], { phone: ANN, node: 'agent', flow: 'support', fromName: 'Ann' });

    const missing = await bot.d.request('POST', `/api/${bot.id}/handover/release`, { key: bot.key, json: {} });
    t.is(missing.body.error.code, 'MISSING_FIELD');
    const badPhone = await bot.d.request('POST', `/api/${bot.id}/handover/release`, { key: bot.key, json: { phone: '555' } });
    t.is(badPhone.body.error.code, 'INVALID_PHONE');
    const other = await bot.d.request('POST', `/api/${bot.id}/handover/release`, { key: bot.key, json: { phone: '+15550000000' } });
    t.is(other.status, 404);
    t.is(other.body.error.code, 'NOT_FOUND');

    const rel = await bot.d.request('POST', `/api/${bot.id}/handover/release`, { key: bot.key, json: { phone: ANN } });
    t.is(rel.status, 200);
    t.deepEqual(rel.body, { success: true, instanceId: bot.id, chatId: '15551234567@s.whatsapp.net', phone: ANN, released: true });
    t.deepEqual((await bot.d.request('GET', `/api/${bot.id}/handovers`, { key: bot.key })).body.handovers, []);
    await bot.say('hi again');
    t.deepEqual((await bot.sent()).slice(2), [WELCOME]);
  } finally {
    await bot.close();
  }
});

test('a handover times out after flows.handoverTimeoutMinutes (injected clock)', async (t) => {
  const clock = new ManualClock();
  const bot = await startBot({ clock, config: { flows: { handoverTimeoutMinutes: 5 } }, flow: SUPPORT });
  try {
    await bot.say('hi');
    await bot.say('2');
    const opened = bot.events.find((e): e is HandoverEvent => e.type === 'conversation.handover');
    t.is(opened?.data.expiresAt, new Date(clock.now() + 5 * 60_000).toISOString());
    clock.advance(4 * 60_000);
    await bot.say('still there?');
    t.is((await bot.sent()).length, 2);
    clock.advance(2 * 60_000);
    await bot.say('hello');
    t.deepEqual((await bot.sent()).slice(2), [WELCOME]);
    t.deepEqual((await bot.d.request('GET', `/api/${bot.id}/handovers`, { key: bot.key })).body.handovers, []);
  } finally {
    await bot.close();
  }
});

test('an expired handover is released on the daemon clock without any message', async (t) => {
  const clock = new ManualClock();
  const timers = new ManualTimers(clock);
  const bot = await startBot({ clock, timers, config: { flows: { handoverTimeoutMinutes: 1 } }, flow: SUPPORT });
  try {
    await bot.say('human');
    await bot.say('human');
    t.is((await bot.d.request('GET', `/api/${bot.id}/handovers`, { key: bot.key })).body.handovers.length, 1);
    timers.advance(61_000);
    const { waitFor } = await import('../helpers/daemon.js');
    await waitFor(async () => (await bot.d.request('GET', `/api/${bot.id}/handovers`, { key: bot.key })).body.handovers.length === 0, 3000, 'expiry');
    t.pass();
  } finally {
    await bot.close();
  }
});

test('no credits or no connection: the bot stays silent and keeps its place', async (t) => {
  const bot = await startBot({ config: { plans: { trialDays: 0, initialCredits: 0 } }, instance: { credits: 1 }, flow: SUPPORT });
  try {
    await bot.say('hi');
    t.deepEqual(await bot.sent(), [WELCOME]);
    // The one credit is spent: the reply to "1" cannot be sent.
    await bot.say('1');
    t.deepEqual(await bot.sent(), [WELCOME]);
    await bot.d.core.credits.add(bot.id, 5);
    // Still waiting at the menu: "1" answers the menu instead of starting over.
    await bot.say('1');
    t.deepEqual(await bot.sent(), [WELCOME, 'Mon-Fri 9-17.']);

    await bot.say('hi');
    t.is((await bot.d.request('POST', `/api/${bot.id}/sandbox/disconnect`, { key: bot.key })).status, 200);
    // A disconnected sandbox cannot receive either, so drive the bus as the connection would.
    await bot.d.core.bus.publish({
      type: 'message.received',
      instanceId: bot.id,
      timestamp: new Date().toISOString(),
      data: { messageId: 'SBXTEST1', sender: '15551234567@s.whatsapp.net', from: ANN, fromName: 'Ann', chatId: '15551234567@s.whatsapp.net', isGroup: false, type: 'text', text: '1', timestamp: new Date().toISOString() },
    });
    await bot.flows.idle();
    t.is((await bot.d.request('POST', `/api/${bot.id}/sandbox/scan`, { key: bot.key })).status, 200);
    t.deepEqual((await bot.sent()).slice(2), [WELCOME]);
    await bot.say('1');
    t.deepEqual((await bot.sent()).slice(2), [WELCOME, 'Mon-Fri 9-17.']);
  } finally {
    await bot.close();
  }
});

test('group messages are left to people', async (t) => {
  const bot = await startBot({ flow: SUPPORT });
  try {
    await bot.d.core.bus.publish({
      type: 'message.received',
      instanceId: bot.id,
      timestamp: new Date().toISOString(),
      data: { messageId: 'SBXTEST2', sender: '15551234567@s.whatsapp.net', from: ANN, chatId: '120363000000000000@g.us', isGroup: true, type: 'text', text: 'hi', timestamp: new Date().toISOString() },
    });
    await bot.flows.idle();
    t.deepEqual(await bot.sent(), []);
  } finally {
    await bot.close();
  }
});

test('a backreference is refused; catastrophic and polynomial regexes run in linear time on long hostile inbound', async (t) => {
  const bot = await startBot();
  try {
    const backreference = {
      name: 'evil',
      start: 'c',
      nodes: { c: { type: 'condition', rules: [{ regex: '^(a)\\1$', next: 'm' }] }, m: { type: 'message', text: 'matched' } },
    };
    const refused = await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: backreference });
    t.is(refused.status, 400);
    t.is(refused.body.error.code, 'INVALID_FIELD');
    t.regex(refused.body.error.message, /node "c": rules\[0\]\.regex refused: unsupported: backreferences are not supported/);

    // Exponential in a backtracking engine; re2js answers it in one pass.
    const catastrophic = {
      name: 'catastrophic',
      start: 'c',
      nodes: {
        c: { type: 'condition', rules: [{ regex: '^(a+)+$', next: 'm' }], else: 'n' },
        m: { type: 'message', text: 'matched' },
        n: { type: 'message', text: 'no match' },
      },
    };
    t.is((await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: catastrophic })).status, 200);
    const t0 = Date.now();
    await bot.say(`${'a'.repeat(4_000)}!`); // inside the 4,096 characters matchers see
    t.true(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
    t.deepEqual(await bot.sent(), ['no match']);

    // Polynomial in a backtracking engine (~n^4 steps on "aaaa..."); accepted, and run linearly.
    const heavy = {
      name: 'heavy',
      start: 'c',
      nodes: {
        c: { type: 'condition', rules: [{ regex: 'a.*a.*a.*a.*b', next: 'm' }], else: 'n' },
        m: { type: 'message', text: 'matched' },
        n: { type: 'message', text: 'no match' },
      },
    };
    t.is((await bot.d.request('PUT', `/api/${bot.id}/flow`, { key: bot.key, json: heavy })).status, 200);
    const started = Date.now();
    await bot.say('a'.repeat(60_000));
    await bot.say(`${'a'.repeat(100)}b`);
    t.true(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    t.deepEqual(await bot.sent(), ['no match', 'no match', 'matched']);
    const health = await bot.d.request('GET', '/healthz');
    t.is(health.status, 200);
  } finally {
    await bot.close();
  }
});

// Guards issue 21 item 9: a corrupt flow.json answered 500 INTERNAL to GET and DELETE.
test('a corrupt flow.json is STORE_CORRUPT to GET (no path shown), DELETE clears it, and PUT replaces it', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const inst = await d.connectedSandbox();
  const dir = join(d.dataDir, 'flows', inst.id);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'flow.json'), '{"version":1,"flow": {', { mode: 0o600 });
  const got = await d.request('GET', `/api/${inst.id}/flow`, { key: inst.key });
  t.is(got.status, 500);
  t.is(got.body.error.code, 'STORE_CORRUPT');
  t.notRegex(got.body.error.message, new RegExp(d.dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'never the path');
  t.regex(got.body.error.message, /DELETE/);
  const cleared = await d.request('DELETE', `/api/${inst.id}/flow`, { key: inst.key });
  t.is(cleared.status, 200);
  t.true(cleared.body.deleted);
  t.is((await d.request('GET', `/api/${inst.id}/flow`, { key: inst.key })).status, 404);
  await writeFile(join(dir, 'flow.json'), 'garbage', { mode: 0o600 });
  t.is((await d.request('PUT', `/api/${inst.id}/flow`, { key: inst.key, json: SUPPORT })).status, 200, 'a new flow replaces a corrupt one');
  t.is((await d.request('GET', `/api/${inst.id}/flow`, { key: inst.key })).status, 200);
});
