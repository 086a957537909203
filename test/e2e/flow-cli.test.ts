import test from 'ava';
import { readFileSync, readdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FlowsFeature } from '../../src/flows/feature.js';
import { runCli } from '../helpers/cli.js';
import { prepareDataDir, startTestDaemon, tempDir, waitFor, type TestDaemon } from '../helpers/daemon.js';

// Runs the built CLI: `npm run build` first.
const FLOWS_DIR = fileURLToPath(new URL('../../config/flows/', import.meta.url));
const SUPPORT_MENU = join(FLOWS_DIR, 'support-menu.json');
const ANN = '+15551234567';

interface Setup {
  d: TestDaemon;
  plugin: FlowsFeature;
  dataDir: string;
  id: string;
  key: string;
  cli(...args: string[]): ReturnType<typeof runCli>;
  say(message: string): Promise<void>;
  sent(): Promise<string[]>;
  close(): Promise<void>;
}

async function setup(): Promise<Setup> {
  const dataDir = await tempDir();
  const secret = await prepareDataDir(dataDir, { webhooks: { allowPrivateTargets: true } });
  const d = await startTestDaemon({ dataDir });
  const plugin = d.flows;
  const created = await d.request('POST', '/api/instances/create', { secret, json: { sandbox: true, premiumDays: 30 } });
  const id = created.body.instanceId as string;
  const key = created.body.apiKey as string;
  await d.request('POST', `/api/${id}/sandbox/scan`, { key });
  return {
    d,
    plugin,
    dataDir,
    id,
    key,
    cli: (...args) => runCli(args, { dataDir }),
    async say(message) {
      const res = await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: ANN, message, name: 'Ann' } });
      if (res.status !== 200) throw new Error(`inbound ${res.status}`);
      await plugin.idle();
    },
    async sent() {
      return ((await d.request('GET', `/api/${id}/sandbox/sent`, { key })).body.messages as Array<{ message: string }>).map((m) => m.message);
    },
    async close() {
      await d.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

test('flow set accepts every ready-made flow; show and clear; a running daemon follows', async (t) => {
  const s = await setup();
  try {
    for (const file of readdirSync(FLOWS_DIR).filter((f) => f.endsWith('.json'))) {
      const res = await s.cli('--json', 'flow', 'set', s.id, join(FLOWS_DIR, file));
      t.is(res.code, 0, `${file}: ${res.stderr}`);
      t.is(JSON.parse(res.stdout).name, JSON.parse(readFileSync(join(FLOWS_DIR, file), 'utf8')).name);
    }
    const set = await s.cli('flow', 'set', s.id, SUPPORT_MENU, '--json');
    t.is(set.code, 0, set.stderr);
    t.like(JSON.parse(set.stdout), { instanceId: s.id, name: 'support-menu', start: 'welcome' });

    // The daemon uses the flow the CLI set.
    await s.say('hello');
    t.regex((await s.sent())[0] ?? '', /^Hi Ann! Reply with a number/);
    await s.say('1');
    t.is((await s.sent())[1], 'We are open Monday to Friday, 9:00-17:00.');

    const show = await s.cli('--json', 'flow', 'show', s.id);
    t.is(show.code, 0);
    t.deepEqual(JSON.parse(show.stdout).flow, JSON.parse(readFileSync(SUPPORT_MENU, 'utf8')));
    const human = await s.cli('flow', 'show', s.id);
    t.is(human.code, 0);
    t.deepEqual(JSON.parse(human.stdout), JSON.parse(readFileSync(SUPPORT_MENU, 'utf8')));

    const clear = await s.cli('--json', 'flow', 'clear', s.id);
    t.deepEqual(JSON.parse(clear.stdout), { instanceId: s.id, cleared: true });
    const again = await s.cli('--json', 'flow', 'clear', s.id);
    t.is(again.code, 0);
    t.deepEqual(JSON.parse(again.stdout), { instanceId: s.id, cleared: false });
    t.deepEqual(JSON.parse((await s.cli('--json', 'flow', 'show', s.id)).stdout), { instanceId: s.id, flow: null });
    await s.say('hello');
    t.is((await s.sent()).length, 2, 'no flow, no reply');
  } finally {
    await s.close();
  }
});

test('flow set refuses bad input with exit 2 and one line naming the node; unknown instance exits 4', async (t) => {
  const s = await setup();
  try {
    const bad = join(s.dataDir, 'bad.json');
    const flow = JSON.parse(readFileSync(SUPPORT_MENU, 'utf8'));
    flow.nodes.route.rules[0].regex = '^(\\d)\\1$';
    await writeFile(bad, JSON.stringify(flow));
    const res = await s.cli('flow', 'set', s.id, bad);
    t.is(res.code, 2);
    t.regex(res.stderr, /node "route": rules\[0\]\.regex refused: unsupported: backreferences are not supported/);
    t.is(res.stderr.trim().split('\n').length, 1);

    await writeFile(bad, '{ not json');
    t.is((await s.cli('flow', 'set', s.id, bad)).code, 2);
    t.is((await s.cli('flow', 'set', s.id, join(s.dataDir, 'missing.json'))).code, 2);

    const unknown = 'inst_doesnotexist';
    for (const args of [['flow', 'set', unknown, SUPPORT_MENU], ['flow', 'show', unknown], ['flow', 'clear', unknown], ['handover', 'list', unknown], ['handover', 'release', unknown, ANN]]) {
      const r = await s.cli(...args);
      t.is(r.code, 4, args.join(' '));
      t.regex(r.stderr, /no instance with id/);
    }
    t.is((await s.cli('handover', 'release', s.id, '12345')).code, 2);
    // Nothing was stored by the refused attempts.
    t.is((await s.d.request('GET', `/api/${s.id}/flow`, { key: s.key })).status, 404);
  } finally {
    await s.close();
  }
});

test('handover list and release from the CLI unmute the chat in the running daemon', async (t) => {
  const s = await setup();
  try {
    t.is((await s.cli('flow', 'set', s.id, SUPPORT_MENU)).code, 0);
    await s.say('hi');
    await s.say('3');
    t.is((await s.sent())[1], 'Thanks Ann, a colleague will answer you here shortly.');
    await s.say('hello?');
    t.is((await s.sent()).length, 2);

    const list = await s.cli('--json', 'handover', 'list', s.id);
    t.is(list.code, 0);
    const open = JSON.parse(list.stdout).handovers as Array<{ phone: string; node: string; fromName: string }>;
    t.is(open.length, 1);
    t.like(open[0]!, { phone: ANN, node: 'agent', fromName: 'Ann' });
    const human = await s.cli('handover', 'list', s.id);
    t.true(human.stdout.includes(ANN));

    const rel = await s.cli('--json', 'handover', 'release', s.id, ANN);
    t.is(rel.code, 0, rel.stderr);
    t.deepEqual(JSON.parse(rel.stdout), { instanceId: s.id, phone: ANN, chatId: '15551234567@s.whatsapp.net', released: true });
    // The daemon notices within about a second (the poll), and at once on the next message.
    await waitFor(async () => (await s.d.request('GET', `/api/${s.id}/handovers`, { key: s.key })).body.handovers.length === 0, 2000, 'release noticed');
    await s.say('hi');
    t.regex((await s.sent())[2] ?? '', /^Hi Ann! Reply with a number/);

    const twice = await s.cli('handover', 'release', s.id, ANN);
    t.is(twice.code, 4, "404 NOT_FOUND: exit 4, as the error table says");
    t.regex(twice.stderr, /no open handover/);
    t.deepEqual(JSON.parse((await s.cli('--json', 'handover', 'list', s.id)).stdout).handovers, []);
  } finally {
    await s.close();
  }
});
