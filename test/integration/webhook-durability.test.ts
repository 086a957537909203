import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import test from 'ava';
import { GATEWAY_BIN } from '../helpers/cli.js';
import { prepareDataDir, request, startTestDaemon, tempDir, waitFor } from '../helpers/daemon.js';
import { inbound, outbox, setWebhook, startReceiver, waitForOutbox, withWebhookDaemon } from '../helpers/receiver.js';

// Rule: an event is stored (its journal line written and fdatasynced) before it is acknowledged upstream.
test('the event is on disk before the inbound call returns', async (t) => {
  const receiver = await startReceiver({ reply: 'hang' });
  const d = await startTestDaemon({ webhooks: { stopGraceMs: 10 } });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    const messageId = await inbound(d, inst, '+15551234567', 'keep me');
    // Read straight after the answer: the receiver has not acknowledged anything.
    const text = await readFile(join(d.dataDir, 'outbox', inst.id, 'outbox.jsonl'), 'utf8');
    t.true(text.endsWith('\n'), 'the line is complete');
    const stored = await outbox(d.dataDir, inst.id);
    t.is(stored.length, 1);
    t.is(stored[0]!.status, 'pending');
    t.is(stored[0]!.event.type === 'message.received' ? stored[0]!.event.data.messageId : null, messageId);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('only subscribed events are stored, and nothing without a webhook', (t) =>
  withWebhookDaemon(async (d, receiver) => {
    const inst = await d.connectedSandbox();
    await inbound(d, inst, '+15551234567', 'no webhook yet');
    t.deepEqual(await outbox(d.dataDir, inst.id), []);
    await setWebhook(d, inst, receiver.url, { events: ['instance.status'] });
    await inbound(d, inst, '+15551234567', 'not subscribed');
    await d.request('POST', `/api/${inst.id}/sandbox/disconnect`, { key: inst.key });
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.length === 1 && r[0]!.status === 'delivered');
    t.is(records[0]!.type, 'instance.status');
    t.deepEqual(receiver.requests.map((r) => r.json.type), ['instance.status']);
  }));

// Rule: an event that cannot be stored is not acknowledged (the inbound call answers 500), and the
// outbox recovers once the disk does.
test('an event that cannot be stored fails the inbound call instead of being acknowledged', (t) =>
  withWebhookDaemon(async (d, receiver) => {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    // The instance's outbox folder cannot be created: a file is in the way.
    const dir = join(d.dataDir, 'outbox', inst.id);
    await writeFile(dir, 'not a directory');
    const res = await d.request('POST', `/api/${inst.id}/sandbox/inbound`, { key: inst.key, json: { from: '+15551234567', message: 'lost?' } });
    t.is(res.status, 500);
    t.is(res.body.error.code, 'INTERNAL');
    t.is(d.webhooks.pendingCount(), 0, 'nothing queued for the refused event');
    await rm(dir, { force: true });
    await inbound(d, inst, '+15551234567', 'stored');
    const [delivered] = await receiver.waitForCount(1);
    t.is(delivered!.json.data.text, 'stored');
    t.deepEqual((await waitForOutbox(d.dataDir, inst.id, (r) => r[0]?.status === 'delivered')).map((r) => r.event.type === 'message.received' && r.event.data.text), ['stored']);
  }));

interface Child {
  process: ChildProcess;
  port: number;
  stderr: () => string;
}

/** `gateway start` as a child; retries while the killed daemon's lock has not gone stale yet. */
async function startChild(dataDir: string, ms = 30_000): Promise<Child> {
  const until = Date.now() + ms;
  for (;;) {
    const child = spawn(process.execPath, [GATEWAY_BIN, 'start', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    let exited = false;
    child.once('exit', () => (exited = true));
    const info = await waitFor(
      () => {
        if (exited) return 'exited';
        try {
          // Until it listens, daemon.json is absent, stale (a killed daemon's) or has port 0.
          const info = JSON.parse(readFileSync(join(dataDir, 'daemon.json'), 'utf8')) as { port: number; pid: number };
          return info.pid === child.pid && info.port > 0 ? info : null;
        } catch {
          return null;
        }
      },
      ms,
      'daemon.json',
    );
    if (info !== 'exited') return { process: child, port: info.port, stderr: () => stderr };
    if (!/already running/.test(stderr) || Date.now() > until) throw new Error(`daemon did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function killHard(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

test('kill -9 between receipt and delivery: the restarted daemon still delivers it', async (t) => {
  t.timeout(60_000);
  const receiver = await startReceiver({ reply: 'hang' });
  const dataDir = await tempDir();
  await mkdir(dataDir, { recursive: true });
  const secret = await prepareDataDir(dataDir, { webhooks: { allowPrivateTargets: true, timeoutMs: 30_000 } });
  let child = await startChild(dataDir);
  try {
    const base = () => `http://127.0.0.1:${child.port}`;
    const created = await request(base(), 'POST', '/api/instances/create', { secret, json: { sandbox: true } });
    t.is(created.status, 201);
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    t.is((await request(base(), 'POST', `/api/${id}/sandbox/scan`, { key })).status, 200);
    t.is((await request(base(), 'PUT', `/api/${id}/webhook`, { key, json: { url: receiver.url, events: ['message.received'] } })).status, 200);
    const sent = await request(base(), 'POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15551234567', message: 'survive this' } });
    t.is(sent.status, 200);

    // The receiver got the first attempt but never answers it; the daemon dies mid-delivery.
    const [first] = await receiver.waitForCount(1, 10_000);
    await killHard(child.process);
    const [pending] = await outbox(dataDir, id);
    t.is(pending!.status, 'pending');
    t.is(pending!.event.type === 'message.received' ? pending!.event.data.messageId : null, sent.body.messageId);

    receiver.setDefault(200);
    child = await startChild(dataDir);
    const [delivered] = await waitForOutbox(dataDir, id, (r) => r[0]?.status === 'delivered', 15_000);
    const last = receiver.requests.at(-1)!;
    t.is(last.headers['webhook-id'], first!.headers['webhook-id']);
    t.is(last.json.data.messageId, sent.body.messageId);
    t.is<string | undefined, string | undefined>(delivered!.id, first!.headers['webhook-id']);
  } finally {
    await killHard(child.process);
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a torn delivery left by a crash is removed at start; fresh files are left for their writer', async (t) => {
  const first = await startTestDaemon();
  const inst = await first.connectedSandbox();
  await first.daemon.close();
  const dir = join(first.dataDir, 'outbox', inst.id);
  await mkdir(dir, { recursive: true });
  const old = join(dir, 'msg_0000000000torn1.json');
  const fresh = join(dir, 'msg_0000000000torn2.json');
  await writeFile(old, '{"id":"msg_0000000000torn1","st');
  await writeFile(fresh, '{"id":"msg_0000000000torn2","st');
  const past = new Date(Date.now() - 120_000);
  await utimes(old, past, past);
  const again = await startTestDaemon({ dataDir: first.dataDir });
  try {
    const names = await readdir(dir);
    t.false(names.includes('msg_0000000000torn1.json'));
    t.true(names.includes('msg_0000000000torn2.json'));
  } finally {
    await again.close();
  }
});
