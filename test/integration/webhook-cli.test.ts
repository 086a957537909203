import test from 'ava';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { inbound, outbox, setWebhook, startReceiver, waitForOutbox } from '../helpers/receiver.js';

// These run the built CLI: `npm run build` first (npm test does).

const config = { webhooks: { allowPrivateTargets: true, retryDelaysMs: [] } };

test('webhook deliveries lists status, attempts and last error; redeliver re-sends with the same id to a running daemon', async (t) => {
  const receiver = await startReceiver();
  receiver.script({ status: 500, body: 'receiver exploded' });
  const d = await startTestDaemon({ config });
  try {
    const inst = await d.connectedSandbox();
    await setWebhook(d, inst, receiver.url);
    await inbound(d, inst, '+15550000001', 'will fail');
    await waitForOutbox(d.dataDir, inst.id, (r) => r[0]?.status === 'failed');
    await inbound(d, inst, '+15550000002', 'will arrive');
    await waitForOutbox(d.dataDir, inst.id, (r) => r[1]?.status === 'delivered');

    const all = await runCli(['--json', 'webhook', 'deliveries', inst.id], { dataDir: d.dataDir });
    t.is(all.code, 0, all.stderr);
    const listed = JSON.parse(all.stdout) as { counts: Record<string, number>; deliveries: Array<Record<string, unknown>> };
    t.deepEqual(listed.counts, { pending: 0, delivered: 1, failed: 1 });
    t.is(listed.deliveries.length, 2);
    for (const key of ['id', 'type', 'createdAt', 'status', 'attempts', 'lastError', 'lastStatus', 'nextAttemptAt', 'deliveredAt']) t.true(key in listed.deliveries[0]!, key);

    const failedOnly = await runCli(['webhook', 'deliveries', inst.id, '--failed', '--json'], { dataDir: d.dataDir });
    t.is(failedOnly.code, 0, failedOnly.stderr);
    const [failed] = (JSON.parse(failedOnly.stdout) as { deliveries: Array<{ id: string; status: string; attempts: number; lastError: string; lastStatus: number }> }).deliveries;
    t.like(failed, { status: 'failed', attempts: 1, lastStatus: 500, lastError: 'HTTP 500: receiver exploded' });

    const human = await runCli(['webhook', 'deliveries', inst.id, '--failed'], { dataDir: d.dataDir });
    t.is(human.code, 0);
    t.regex(human.stdout, new RegExp(`${failed!.id}\\s+failed .*attempts 1.*last error: HTTP 500: receiver exploded`));

    const firstId = receiver.requests[0]!.headers['webhook-id'] ?? '';
    t.is(failed!.id, firstId);
    const before = receiver.requests.length;
    const redo = await runCli(['webhook', 'redeliver', inst.id, failed!.id, '--json'], { dataDir: d.dataDir });
    t.is(redo.code, 0, redo.stderr);
    t.like(JSON.parse(redo.stdout), { instanceId: inst.id, requeued: true, delivery: { id: failed!.id, status: 'pending' } });
    // The running daemon notices the request on its own (watch + 250 ms poll).
    await receiver.waitForCount(before + 1, 2000);
    const again = receiver.requests.at(-1)!;
    t.is(again.headers['webhook-id'], firstId);
    t.is(again.body, receiver.requests[0]!.body);
    const records = await waitForOutbox(d.dataDir, inst.id, (r) => r.every((x) => x.status === 'delivered'));
    t.is(records.find((x) => x.id === firstId)!.redeliveries, 1);
  } finally {
    await d.close();
    await receiver.close();
  }
});

test('redeliver works while the daemon is down: the next start sends it', async (t) => {
  const receiver = await startReceiver({ reply: 500 });
  const first = await startTestDaemon({ config });
  let second: Awaited<ReturnType<typeof startTestDaemon>> | null = null;
  try {
    const inst = await first.connectedSandbox();
    await setWebhook(first, inst, receiver.url);
    await inbound(first, inst, '+15550000001', 'later');
    const [failed] = await waitForOutbox(first.dataDir, inst.id, (r) => r[0]?.status === 'failed');
    await first.daemon.close();

    const redo = await runCli(['webhook', 'redeliver', inst.id, failed!.id], { dataDir: first.dataDir });
    t.is(redo.code, 0, redo.stderr);
    t.regex(redo.stdout, /Re-queued/);
    t.is((await outbox(first.dataDir, inst.id))[0]!.status, 'pending');

    receiver.setDefault(200);
    second = await startTestDaemon({ dataDir: first.dataDir });
    const [done] = await waitForOutbox(first.dataDir, inst.id, (r) => r[0]?.status === 'delivered');
    t.is(done!.id, failed!.id);
    t.is(receiver.requests.at(-1)!.headers['webhook-id'], failed!.id);
  } finally {
    await second?.close();
    await first.close();
    await receiver.close();
  }
});

test('exit codes: 4 for an unknown instance or delivery, 2 for bad usage', async (t) => {
  const d = await startTestDaemon({ config });
  try {
    const inst = await d.connectedSandbox();
    const dataDir = d.dataDir;
    const cases: Array<[string[], number]> = [
      [['webhook', 'deliveries', 'inst_doesnotexist'], 4],
      [['webhook', 'redeliver', 'inst_doesnotexist', 'msg_0000000000000000'], 4],
      [['webhook', 'redeliver', inst.id, 'msg_0000000000000000'], 4],
      [['webhook', 'redeliver', inst.id, '../../config'], 4],
      [['webhook', 'deliveries'], 2],
      [['webhook', 'redeliver', inst.id], 2],
      [['webhook', 'deliveries', inst.id, '--limit', 'many'], 2],
    ];
    for (const [args, code] of cases) {
      const res = await runCli(args, { dataDir });
      t.is(res.code, code, `${args.join(' ')}: ${res.stderr}`);
      t.true(res.stderr.length > 0, `${args.join(' ')} explains itself`);
    }
    const empty = await runCli(['webhook', 'deliveries', inst.id], { dataDir });
    t.is(empty.code, 0);
    t.is(empty.stdout.trim(), 'no deliveries');
  } finally {
    await d.close();
  }
});
