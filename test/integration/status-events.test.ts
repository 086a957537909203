import test from 'ava';
import { DAY_MS } from '../../src/domain/clock.js';
import { ManualClock, ManualTimers } from '../helpers/manual-time.js';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';
import { setWebhook, startReceiver } from '../helpers/receiver.js';

test('instance.status follows the connection and the plan: requires_premium and back', async (t) => {
  const clock = new ManualClock(Date.now());
  // Premium expiry is a timer on the daemon clock.
  const timers = new ManualTimers(clock);
  const receiver = await startReceiver();
  const d = await startTestDaemon({ clock, timers });
  try {
    const inst = await d.createInstance({ sandbox: true, premiumDays: 30 });
    await setWebhook(d, inst, receiver.url, { events: ['instance.status'] });
    await waitFor(async () => {
      timers.advance(100);
      return (await d.request('GET', `/api/${inst.id}/status`, { key: inst.key })).body.status === 'qr_code_generated';
    }, 2000, 'qr');
    await d.request('POST', `/api/${inst.id}/sandbox/scan`, { key: inst.key });
    const statuses = () => receiver.requests.map((r) => `${String(r.json.data.from)}>${String(r.json.data.to)}`);
    await waitFor(() => statuses().includes('qr_code_generated>connected'), 3000, 'connected event');

    timers.advance(31 * DAY_MS);
    await waitFor(() => statuses().includes('connected>requires_premium'), 5000, `requires_premium event; ${statuses().join(' ')}`);
    const lapsed = receiver.requests.find((r) => r.json.data.to === 'requires_premium');
    t.is(lapsed?.json.data.reason, 'premium expired and no credits remain');

    await runCli(['credits', 'add', inst.id, '5'], { dataDir: d.dataDir });
    await waitFor(() => statuses().includes('requires_premium>connected'), 5000, `back to connected; ${statuses().join(' ')}`);
    t.is(receiver.requests.find((r) => r.json.data.from === 'requires_premium')?.json.data.reason, 'credits added');
    t.is(new Set(statuses()).size, statuses().length, 'each change reported once');
  } finally {
    await d.close();
    await receiver.close();
  }
});
