import test from 'ava';
import { rm } from 'node:fs/promises';
import { prepareDataDir, startTestDaemon, tempDir, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { exampleFlow } from '../../src/flows/example.js';

const SUPPORT = exampleFlow();

async function boot(dataDir: string) {
  const d = await startTestDaemon({ dataDir });
  const plugin = d.flows;
  return { d, plugin };
}

async function sent(d: TestDaemon, id: string, key: string): Promise<Array<{ phone: string; message: string }>> {
  return (await d.request('GET', `/api/${id}/sandbox/sent`, { key })).body.messages;
}

test('a conversation and an open handover survive a daemon restart', async (t) => {
  const dataDir = await tempDir();
  try {
    const secret = await prepareDataDir(dataDir, { webhooks: { allowPrivateTargets: true } });
    let { d, plugin } = await boot(dataDir);
    const created = await d.request('POST', '/api/instances/create', { secret, json: { sandbox: true, premiumDays: 30 } });
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    try {
      t.is((await d.request('POST', `/api/${id}/sandbox/scan`, { key })).status, 200);
      t.is((await d.request('PUT', `/api/${id}/flow`, { key, json: SUPPORT })).status, 200);
      const say = async (from: string, message: string) => {
        t.is((await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from, message, name: 'Ann' } })).status, 200);
        await plugin.idle();
      };
      await say('+15551111111', 'hi'); // waits at the menu
      await say('+15552222222', 'hi');
      await say('+15552222222', 'agent'); // handed over
      t.is((await sent(d, id, key)).length, 3);

      await d.close();
      ({ d, plugin } = await boot(dataDir));
      await waitFor(async () => (await d.request('GET', `/api/${id}/status`, { key })).body.status === 'connected', 5000, 'reconnect');

      await say('+15551111111', '1');
      await say('+15552222222', 'hello?');
      const after = await sent(d, id, key);
      // The sandbox log starts empty after a restart: only replies of the new process are listed.
      t.deepEqual(after.map((m) => [m.phone, m.message]), [['+15551111111', 'Mon-Fri 9-17.']]);
      const handovers = await d.request('GET', `/api/${id}/handovers`, { key });
      t.deepEqual(handovers.body.handovers.map((h: { phone: string }) => h.phone), ['+15552222222']);
    } finally {
      await d.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
