/**
 * Guards issue 23 item 6 (`gateway storage migrate --to URL`), end to end with the built CLI and
 * daemon (`npm run build` first) and real Baileys against the protocol double: a files data dir
 * with two paired phones, history in and out (a receipt, a reaction, an edit, an image), credits
 * spent, a flow with an open handover and a webhook delivery pending while its receiver is down
 * is stopped and migrated; then two nodes are set up on the database as the migration says
 * (`gateway init --database URL --force --cluster-secret S` on the migrated data dir, and on a new
 * one) and started. Both instances connect without a QR (no new registration at the double), their
 * Signal sessions came along (a contact's next message on her session is decrypted without a retry
 * receipt; checked to fail when the session rows are dropped), history, media, credits, the flow
 * and the handover read the same, the old X-API-Secret and API keys work, and every delivery
 * pending in the files reaches the receiver once it is up, with its original webhook-id and the
 * instance's signature.
 */
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';
import { exampleFlow } from '../../src/flows/example.js';
import { runCli } from '../helpers/cli.js';
import { startChildDaemon, type ChildDaemon } from '../helpers/child-daemon.js';
import { prepareDataDir, request, tempDir, waitFor, type ApiResponse, type ConfigPatch, type RequestOptions } from '../helpers/daemon.js';
import { freshDatabase } from '../helpers/postgres.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { randomPng } from '../protocol-double/fixtures.js';
import { FAST_BAILEYS } from '../protocol-double/harness.js';
import { childPreloadEnv } from '../protocol-double/index.js';
import { mediaTrustEnv } from '../protocol-double/media.js';
import { ProtocolDouble } from '../protocol-double/server.js';

interface Instance {
  id: string;
  key: string;
  whsec: string;
  phone: string;
}

/** What the API shows of an instance's stored state (compared before and after the migration). */
async function snapshot(url: string, secret: string, inst: Instance): Promise<Record<string, unknown>> {
  const call = async (path: string, options: RequestOptions = { key: inst.key }): Promise<unknown> => {
    const res = await request(url, 'GET', path, options);
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as unknown;
  };
  const admin = (await call(`/api/instances/${inst.id}`, { secret })) as Record<string, unknown>;
  const chats = (await call(`/api/${inst.id}/chats`)) as { chats: Array<{ chatId: string }> };
  const messages: Record<string, unknown> = {};
  for (const c of chats.chats) messages[c.chatId] = await call(`/api/${inst.id}/chats/${encodeURIComponent(c.chatId)}/messages?limit=100`);
  const deliveries = (await call(`/api/${inst.id}/webhook/deliveries`)) as { deliveries: Array<{ id: string; status: string; type: string }> };
  return {
    plan: { name: admin.name, owner: admin.owner, credits: admin.credits, quotaRemaining: admin.quotaRemaining, premiumUntil: admin.premiumUntil, webhook: admin.webhook },
    chats,
    messages,
    flow: await request(url, 'GET', `/api/${inst.id}/flow`, { key: inst.key }).then((r) => ({ status: r.status, body: r.body as unknown })),
    handovers: await call(`/api/${inst.id}/handovers`),
    // Pending ones move on (attempts) while the daemons run: who they are is what must not change.
    // Connection statuses come and go with every stop and start.
    deliveries: deliveries.deliveries.filter((d) => d.type !== 'instance.status').map((d) => `${d.id} ${d.type} ${d.status === 'pending' ? 'pending' : 'finished'}`).sort(),
  };
}

test('a files gateway with two paired phones, migrated, runs on two PostgreSQL nodes without a QR, with its history, credits, flow, handover and pending webhook', async (t) => {
  t.timeout(420_000);
  const double = await ProtocolDouble.start({ assumedPreKeys: 0 });
  let receiver: Receiver = await startReceiver();
  const hookPort = receiver.port;
  const db = await freshDatabase();
  const dataDir = await tempDir('gw-migrate-files-');
  const nodeDir = await tempDir('gw-migrate-node1-');
  const daemons: ChildDaemon[] = [];
  t.teardown(async () => {
    for (const d of daemons) {
      d.kill('SIGKILL');
      await d.exited;
    }
    await receiver.close();
    await double.close();
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
    await rm(nodeDir, { recursive: true, force: true });
  });
  const env = { ...childPreloadEnv(), ...mediaTrustEnv(double.media.hostname) };
  const config: ConfigPatch = {
    // Retries every 2 s for 100 s: the delivery stays pending through the migration.
    webhooks: { allowPrivateTargets: true, retryDelaysMs: Array<number>(50).fill(2_000) },
    sending: { minIntervalMs: 0, jitterMs: 0 },
    plans: { trialDays: 0, initialCredits: 100 },
    baileys: { ...FAST_BAILEYS, webSocketUrl: double.url },
  };
  const secret = await prepareDataDir(dataDir, config);
  const files = await startChildDaemon(dataDir, [], env);
  daemons.push(files);
  const output = (): string => daemons.map((d) => `${d.stdout().slice(-3000)}\n${d.stderr().slice(-3000)}`).join('\n---\n');
  t.teardown(() => {
    if (!t.passed) t.log(output());
  });
  const api = (base: string, inst: Instance, method: string, path: string, options: Omit<RequestOptions, 'key'> = {}): Promise<ApiResponse> =>
    request(base, method, `/api/${inst.id}${path}`, { ...options, key: inst.key });
  const status = async (base: string, inst: Instance): Promise<string> => (await api(base, inst, 'GET', '/status')).body?.status as string;

  // Two instances, each paired with a phone of its own (a QR each: two registrations).
  const instances: Instance[] = [];
  for (const [i, phone] of ['15550009001', '15550009002'].entries()) {
    const created = await request(files.url, 'POST', '/api/instances/create', { secret, json: { name: `shop ${i}` } });
    t.is(created.status, 201, JSON.stringify(created.body));
    const inst: Instance = { id: created.body.instanceId as string, key: created.body.apiKey as string, whsec: `whsec_${randomBytes(24).toString('base64')}`, phone };
    t.is((await api(files.url, inst, 'PUT', '/webhook', { json: { url: receiver.url, secret: inst.whsec, events: null } })).status, 200);
    await waitFor(async () => (await status(files.url, inst)) === 'qr_code_generated', 30_000, 'a QR');
    const qr = (await api(files.url, inst, 'GET', '/qr-code')).body.qr as string;
    const device = await double.scan(qr, { phone });
    await waitFor(async () => (await status(files.url, inst)) === 'connected', 30_000, 'connected');
    await double.synced(device, 20_000);
    instances.push(inst);
  }
  const [a, b] = instances as [Instance, Instance];
  const registrations = double.registrations().length;
  t.is(registrations, 2);
  const received = (type: string, match: (data: Record<string, unknown>) => boolean): Promise<unknown> =>
    waitFor(() => receiver.requests.find((r) => r.json.type === type && match(r.json.data)), 20_000, `a ${type} webhook`);

  // History in and out on both, with what happens to messages afterwards.
  const alice = await double.contact('+15550000201', { name: 'Alice' });
  const bob = await double.contact('+15550000202', { name: 'Bob' });
  const out = await api(files.url, a, 'POST', '/send', { json: { phone: alice.phone, message: 'Hello Alice' } });
  t.is(out.status, 200, JSON.stringify(out.body));
  const m = await alice.nextMessage();
  alice.receipt(m, 'delivery');
  alice.receipt(m, 'read');
  await received('message.status', (d) => d.messageId === m.id && d.status === 'read');
  const hi = await alice.sendText(double.accountJid(a.phone), 'Hi shop', { quoted: m });
  await received('message.received', (d) => d.messageId === hi);
  await alice.react(double.accountJid(a.phone), { id: m.id, fromMe: false }, '👍');
  await received('message.reaction', (d) => d.messageId === m.id);
  await alice.edit(double.accountJid(a.phone), hi, 'Hi shop, edited');
  await received('message.edited', (d) => d.messageId === hi);
  const png = randomPng(64);
  const image = await alice.sendImage(double.accountJid(a.phone), png, { caption: 'a photo' });
  await received('message.received', (d) => d.messageId === image);
  const toBob = await api(files.url, b, 'POST', '/send', { json: { phone: bob.phone, message: 'Hello Bob' } });
  t.is(toBob.status, 200);
  const mb = await bob.nextMessage();
  bob.receipt(mb, 'delivery');
  await received('message.status', (d) => d.messageId === mb.id && d.status === 'delivered');
  const fromBob = await bob.sendText(double.accountJid(b.phone), 'Hi from Bob');
  await received('message.received', (d) => d.messageId === fromBob);

  // A flow on b, and a chat handed over to a human.
  t.is((await api(files.url, b, 'PUT', '/flow', { json: exampleFlow() })).status, 200);
  const carol = await double.contact('+15550000203', { name: 'Carol' });
  await carol.sendText(double.accountJid(b.phone), 'hi');
  await carol.nextMessage();
  await carol.sendText(double.accountJid(b.phone), 'agent');
  await waitFor(async () => ((await api(files.url, b, 'GET', '/handovers')).body.handovers as unknown[]).length === 1, 20_000, 'a handover');
  await received('conversation.handover', (d) => d.chatId === carol.jid);

  // The receiver goes down; Dave writes to a: that delivery stays pending, retried.
  await receiver.close();
  const dave = await double.contact('+15550000204', { name: 'Dave' });
  const late = await dave.sendText(double.accountJid(a.phone), 'are you there?');
  type Pending = { id: string; status: string; attempts: number; type: string; createdAt: string; inst: Instance };
  const pendingOf = async (base: string, inst: Instance): Promise<Pending[]> =>
    ((await api(base, inst, 'GET', '/webhook/deliveries')).body.deliveries as Pending[]).filter((d) => d.status === 'pending').map((d) => ({ ...d, inst }));
  const daves = await waitFor(async () => (await pendingOf(files.url, a)).find((d) => d.type === 'message.received' && d.attempts >= 1), 20_000, "Dave's delivery pending, tried once");

  const before = [await snapshot(files.url, secret, a), await snapshot(files.url, secret, b)];
  t.is((before[0]!.plan as { credits: number }).credits, 99, 'one send paid');
  files.kill('SIGTERM');
  t.is(await files.exited, 0);
  const stoppedAt = new Date().toISOString();

  // The migration.
  const migrated = await runCli(['storage', 'migrate', '--to', db.url, '--json'], { dataDir });
  t.is(migrated.code, 0, migrated.stderr);
  const report = JSON.parse(migrated.stdout) as { clusterSecret: string; totals: Record<string, number>; next: { firstNode: string } };
  t.like(report.totals, { instance: 2, authCreds: 2, flow: 1, handovers: 1, media: 1 });
  t.true(report.totals.authTables! >= 4, `key tables: ${report.totals.authTables}`);
  t.true(report.next.firstNode.includes(`--cluster-secret ${report.clusterSecret}`));

  // Two nodes, set up as the migration says: the migrated data dir, and a new one.
  const init0 = await runCli(['init', '--database', db.url, '--force', '--cluster-secret', report.clusterSecret, '--node-id', 'node0'], { dataDir });
  t.is(init0.code, 0, init0.stderr);
  t.regex(init0.stdout, /as a node of the gateway in that database/);
  await prepareDataDir(nodeDir, config);
  const init1 = await runCli(['init', '--database', db.url, '--force', '--cluster-secret', report.clusterSecret, '--node-id', 'node1'], { dataDir: nodeDir });
  t.is(init1.code, 0, init1.stderr);
  const nodes = [await startChildDaemon(dataDir, [], env), await startChildDaemon(nodeDir, [], env)];
  daemons.push(...nodes);
  await waitFor(async () => ((await request(nodes[1]!.url, 'GET', '/api/cluster', { secret })).body?.nodes?.length ?? 0) === 2, 30_000, 'two nodes, with the old X-API-Secret');

  for (const inst of instances) await waitFor(async () => (await status(nodes[1]!.url, inst)) === 'connected', 60_000, `${inst.id} connected on the cluster`);
  t.is(double.registrations().length, registrations, 'no new registration: no QR, the phones stayed paired');
  t.true(double.logins().length >= registrations * 2, 'they logged in again from the stored sessions');

  const after = [await snapshot(nodes[1]!.url, secret, a), await snapshot(nodes[0]!.url, secret, b)];
  t.deepEqual(after, before, 'history, credits, flow, handover and deliveries read the same on the nodes');
  const media = await fetch(`${nodes[0]!.url}/api/${a.id}/messages/${image}/media`, { headers: { 'x-api-key': a.key } });
  t.is(media.status, 200);
  t.true(Buffer.from(await media.arrayBuffer()).equals(png), 'the image bytes');

  // The Signal sessions came along: what Alice sends on her session is decrypted at once (no retry
  // receipt asking her for a new one), and she reads what the gateway sends her.
  const retries = alice.retries.length;
  const hello = await alice.sendText(double.accountJid(a.phone), 'Hello again');
  const again = await api(nodes[0]!.url, a, 'POST', '/send', { json: { phone: alice.phone, message: 'Still here' } });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.is(again.body.quotaRemaining, '98', 'credits go on from where they were');
  t.is((await alice.nextMessage()).text, 'Still here');
  // (Delivered once the receiver is up, below.)

  // What was pending in the files (Dave's message, the statuses of the stop) is pending on the nodes.
  const pending = [...(await pendingOf(nodes[0]!.url, a)), ...(await pendingOf(nodes[1]!.url, b))].filter((d) => d.createdAt <= stoppedAt);
  t.is(pending.length, report.totals.pendingDeliveries ?? -1);
  t.true(pending.some((d) => d.id === daves.id));
  t.log(`pending from the files: ${pending.map((p) => p.type).join(', ')}`);

  // The receiver comes back: each arrives with its original webhook-id, signed with its instance's secret.
  receiver = await startReceiver({ port: hookPort });
  for (const p of pending) {
    const got = await waitFor(() => receiver.requests.find((r) => r.headers['webhook-id'] === p.id), 30_000, `delivery ${p.id}`);
    const event = new Webhook(p.inst.whsec).verify(got.body, got.headers) as { type: string; instanceId: string };
    t.like(event, { type: p.type, instanceId: p.inst.id });
  }
  t.true(receiver.requests.some((r) => r.json.type === 'message.received' && r.json.data.messageId === late), "Dave's message reached the receiver");
  await waitFor(() => receiver.requests.find((r) => r.json.type === 'message.received' && r.json.data.messageId === hello), 30_000, "Alice's new message");
  t.is(alice.retries.length, retries, 'decrypted from the migrated session: no retry receipt');

  // A new contact's first message starts its session on one of the one-time pre-keys the files
  // gateway made and uploaded (kept packed in memory, JSON in the file, migrated, packed again on
  // the node): decrypted at once.
  const usedPreKeys = () => [...double.devices.values()].reduce((n, d) => n + d.usedPreKeys.length, 0);
  const used = usedPreKeys();
  const erin = await double.contact('+15550000205', { name: 'Erin' });
  const fromErin = await erin.sendText(double.accountJid(b.phone), 'first time here');
  await waitFor(() => receiver.requests.find((r) => r.json.type === 'message.received' && r.json.data.messageId === fromErin), 30_000, "Erin's first message");
  t.is(usedPreKeys(), used + 1, 'her session started on an uploaded pre-key');
  t.is(erin.retries.length, 0, 'decrypted with the migrated pre-key: no retry receipt');
  t.deepEqual(double.errors, []);
});
