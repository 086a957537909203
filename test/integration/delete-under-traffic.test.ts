/**
 * Guards issue 12, "`instance delete` during traffic": an in-flight debit re-created the credit
 * file, a webhook storm left outbox files (message bodies) and a second delete said "no such
 * instance". Delete takes the instance out of service first, then removes everything: after it,
 * no file in the data dir names the instance, its key is refused, and a second delete is a clean 404.
 */
import test from 'ava';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startTestDaemon } from '../helpers/daemon.js';
import { startReceiver } from '../helpers/receiver.js';

async function filesNaming(dir: string, id: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      const path = join(d, entry.name);
      if (entry.name.includes(id)) found.push(path);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk(dir);
  return found;
}

test('delete during sends and a webhook storm leaves nothing of the instance', async (t) => {
  const receiver = await startReceiver({ reply: 500 });
  t.teardown(() => receiver.close());
  const d = await startTestDaemon({ config: { plans: { trialDays: 0 }, webhooks: { allowPrivateTargets: true, retryDelaysMs: [50, 50, 50] } } });
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox({ credits: 1000, webhookUrl: receiver.url, webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
  const other = await d.connectedSandbox({ credits: 10 });

  const traffic: Array<Promise<number>> = [];
  for (let i = 0; i < 60; i++) {
    traffic.push(d.request('POST', `/api/${id}/send`, { key, json: { phone: '+15551234567', message: `out ${i}` } }).then((r) => r.status));
    traffic.push(d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: `+1555000${String(1000 + i)}`, message: `in ${i}` } }).then((r) => r.status));
  }
  await receiver.waitForCount(5, 10_000);
  const del = await d.request('DELETE', `/api/instances/${id}`, { secret: d.secret });
  t.is(del.status, 200, JSON.stringify(del.body));
  const statuses = await Promise.all(traffic);
  // 401 once the key is gone, 429 when those 401s trip the auth-failure limiter, 503 for a send caught mid-delete.
  t.true(statuses.every((s) => s === 200 || s === 401 || s === 429 || s === 503), `only clean answers: ${[...new Set(statuses)].join(',')}`);

  // Late debits, retries and journal flushes must not bring anything back.
  await new Promise((r) => setTimeout(r, 500));
  t.deepEqual(await filesNaming(d.dataDir, id), []);
  t.true([401, 429].includes((await d.request('GET', `/api/${id}/status`, { key })).status), 'the key is refused');
  const again = await d.request('DELETE', `/api/instances/${id}`, { secret: d.secret });
  t.is(again.status, 404);
  t.is(again.body.error.code, 'NOT_FOUND');
  // The other instance is untouched.
  const ok = await d.request('POST', `/api/${other.id}/send`, { key: other.key, json: { phone: '+15551234567', message: 'still here' } });
  t.is(ok.status, 200);
});
