/**
 * Guards issue 23 (several hosts): PostgreSQL restarted under traffic. Meanwhile requests are
 * answered 503 with Retry-After (nothing sent or charged); nothing acknowledged is lost; every node
 * recovers by itself, without a restart of its own. A send that left just as the database went
 * away is `500 SENT_NOT_RECORDED` with its messageId (contract part 1: never "nothing was sent" for
 * a message that left), and its debit, kept queued, is written once the database is back: charged
 * exactly once (CI once saw one such send among ~190).
 */
import test from 'ava';
import { startGatewayCluster } from '../helpers/cluster.js';
import { waitFor } from '../helpers/daemon.js';
import { startCluster } from '../helpers/postgres.js';

test('PostgreSQL restarted under traffic: 503 with Retry-After meanwhile, every credit exact, every node recovers without a restart', async (t) => {
  t.timeout(240_000);
  const server = await startCluster();
  const cluster = await startGatewayCluster({ serverUrl: server.url, leaseTtlMs: 15_000 });
  t.teardown(async () => {
    await cluster.close().catch(() => undefined);
    server.destroy();
  });
  const created = await cluster.request(0, 'POST', '/api/instances/create', { secret: cluster.secret, json: { sandbox: true, credits: 1000 } });
  const { instanceId: id, apiKey: key } = created.body as { instanceId: string; apiKey: string };
  t.is((await cluster.request(1, 'POST', `/api/${id}/sandbox/scan`, { key })).status, 200);

  let ok = 0;
  let refused = 0;
  let withoutRetryAfter = 0;
  let unanswered = 0;
  let sentNotRecorded = 0;
  const codes = new Set<string>();
  let stopAt = 60;
  let restarted = false;
  const worker = async (w: number): Promise<void> => {
    for (let n = 0; ok < 150 && n < 2_000; n++) {
      if (ok >= stopAt && !restarted) {
        restarted = true;
        server.stop('fast');
        setTimeout(() => server.start(), 3_000);
      }
      const res = await cluster.request((w + n) % 3, 'POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: `w${w} n${n}` }, timeoutMs: 30_000 }).catch(() => null);
      if (res === null) {
        unanswered += 1;
        continue;
      }
      if (res.status === 200) ok += 1;
      else if (res.status === 500 && res.body?.error?.code === 'SENT_NOT_RECORDED') {
        // Sent: it must carry its id, and is debited once the database takes the queued debit.
        sentNotRecorded += 1;
        if (typeof res.body?.error?.messageId !== 'string') codes.add('500 SENT_NOT_RECORDED without a messageId');
      } else {
        refused += 1;
        codes.add(`${res.status} ${res.body?.error?.code}`);
        if (res.status === 503 && !res.headers.get('retry-after') && res.body?.error?.code !== 'CONNECTION_NOT_READY') withoutRetryAfter += 1;
        await new Promise((r) => setTimeout(r, 300));
      }
    }
  };
  stopAt = 60;
  await Promise.all(Array.from({ length: 4 }, (_, w) => worker(w)));
  t.log({ ok, refused, unanswered, sentNotRecorded, codes: [...codes] });
  t.true(restarted, 'the database was restarted under traffic');
  t.true(refused > 0, 'requests were refused while it was down');
  t.is(withoutRetryAfter, 0, 'every 503 of the outage carried Retry-After');
  t.true([...codes].every((c) => /^503 (STORAGE_UNAVAILABLE|INSTANCE_MOVING|CONNECTION_NOT_READY)$/.test(c)), [...codes].join(', '));
  t.is(unanswered, 0);
  // Every node serves again, on its own.
  for (let i = 0; i < 3; i++) {
    const res = await waitFor(async () => {
      const r = await cluster.request(i, 'POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: `after via ${i}` } });
      return r.status === 200 ? r : null;
    }, 60_000, `node ${i} sends again`);
    t.is(res.status, 200);
    ok += 1;
  }
  const balance = async (): Promise<number> => (await cluster.request(2, 'GET', `/api/instances/${id}`, { secret: cluster.secret })).body.credits as number;
  // A queued debit is tried again every second; it may land a moment after the sends above.
  const expected = 1000 - ok - sentNotRecorded;
  await waitFor(async () => ((await balance()) === expected ? true : null), 15_000, 'the queued debits written').catch(() => undefined);
  t.is(await balance(), expected, 'every 200 and every sent-not-recorded debited once, nothing refused was charged');
});
