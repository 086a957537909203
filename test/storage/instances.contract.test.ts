/**
 * The instance port's contract (issue 22: one storage seam; issue 23: the same contract on
 * PostgreSQL): records survive a reopen (deleting ones too), the owner's one-time trial is granted
 * exactly once even to concurrent creates, a sandbox never takes it, unknown ids are NOT_FOUND,
 * an acknowledged create survives kill -9, and Storage.removeInstance leaves nothing behind; issue 24:
 * the instance settings are kept whole with the record.
 */
import { engineTest, testConfig } from './engines.js';
import { crashRun } from './crash.js';
import { authSnapshot, outgoing } from './scenarios.js';

engineTest('instances: created, modified and marked deleting records survive a reopen, in order', async (t, at) => {
  const s = await at.open();
  const a = await s.instances.create({ name: 'first', owner: 'alice' });
  const b = await s.instances.create({ name: 'second', owner: 'alice', webhook: { url: 'https://example.com/hook', secret: null, events: ['message.received'] } });
  const c = await s.instances.create({ name: 'third', owner: 'bob' });
  t.true(a.trialGranted);
  t.false(b.trialGranted, 'the owner had the trial already');
  t.true(c.trialGranted);
  t.truthy(a.record.premiumUntil);
  t.is(b.record.premiumUntil, null);
  await s.instances.modify(b.record.id, (r) => {
    r.name = 'renamed';
  });
  await s.instances.markDeleting(c.record.id);
  t.is(s.instances.get(c.record.id), undefined);
  t.is(s.instances.getAny(c.record.id)?.deleting, true);
  t.is(s.instances.size, 2);
  const list = s.instances.list();
  await s.close();

  const again = await at.open();
  t.deepEqual(again.instances.list(), list);
  t.is(again.instances.get(b.record.id)?.name, 'renamed');
  t.deepEqual(again.instances.get(b.record.id)?.webhook, { url: 'https://example.com/hook', secret: null, events: ['message.received'] });
  t.deepEqual(again.instances.deleting().map((r) => r.id), [c.record.id]);
  await again.instances.remove(c.record.id);
  t.is(again.instances.getAny(c.record.id), undefined);
  await again.close();
  const third = await at.open();
  t.deepEqual(third.instances.deleting(), []);
  t.is(third.instances.size, 2);
});

engineTest('instances: settings (the proxy with its credentials) are kept with the record across a reopen', async (t, at) => {
  const s = await at.open();
  const { record } = await s.instances.create({ name: 'with settings' });
  const settings = { calls: { autoReject: true, rejectMessage: 'Please write.' }, alwaysOnline: true, autoRead: false, ignoreGroups: true, ignoreStatus: false, syncFullHistory: true, proxy: 'socks5://user:pw@proxy.example.com:1080' };
  await s.instances.modify(record.id, (r) => {
    r.settings = settings;
  });
  await s.close();
  const again = await at.open();
  t.deepEqual(again.instances.get(record.id)?.settings, settings);
  await again.close();
});

engineTest('instances: unknown ids are NOT_FOUND, and a deleting instance cannot be modified', async (t, at) => {
  const s = await at.open();
  t.is((t.throws(() => s.instances.require('inst_nothere00')) as { code?: string } | undefined)?.code, 'NOT_FOUND');
  for (const op of [() => s.instances.modify('inst_nothere00', () => undefined), () => s.instances.markDeleting('inst_nothere00'), () => s.instances.remove('inst_nothere00')]) {
    t.is(((await t.throwsAsync(op())) as { code?: string }).code, 'NOT_FOUND');
  }
  const { record } = await s.instances.create({ name: 'x' });
  await s.instances.markDeleting(record.id);
  t.is(((await t.throwsAsync(s.instances.modify(record.id, () => undefined))) as { code?: string }).code, 'NOT_FOUND');
});

engineTest('instances: 10 concurrent creates of one owner grant the trial exactly once; a sandbox never takes it', async (t, at) => {
  const s = await at.open();
  const sandbox = await s.instances.create({ owner: 'carol', sandbox: true });
  t.false(sandbox.trialGranted);
  const created = await Promise.all(Array.from({ length: 10 }, (_, i) => s.instances.create({ name: `n${i}`, owner: 'carol' })));
  t.is(created.filter((c) => c.trialGranted).length, 1);
  t.is(new Set(created.map((c) => c.record.id)).size, 10);
  t.is(s.instances.size, 11);
});

engineTest('instances: no trial when plans.trialDays is 0, and --premium-days still counts', async (t, at) => {
  const s = await at.open({ config: testConfig({ plans: { trialDays: 0 } }) });
  const c = await s.instances.create({ owner: 'dave', premiumDays: 2 });
  t.false(c.trialGranted);
  t.is(Date.parse(c.record.premiumUntil!) - Date.parse(c.record.createdAt), 2 * 86_400_000);
});

engineTest('instances: after kill -9 between creates every acknowledged instance is there with its starting credits', async (t, at) => {
  const run = await crashRun<{ id: string; trialGranted: boolean }>(at, 'creates', { count: 200 }, (acks) => acks.length >= 8);
  t.true(run.acks.length >= 8, run.stderr);
  const s = await at.open();
  for (const a of run.acks) {
    t.truthy(s.instances.get(a.id), `${a.id} was acknowledged`);
    t.is(s.credits.balance(a.id), 3);
  }
  // Three owners: each got its trial once, whatever the kill interrupted.
  t.is(run.acks.filter((a) => a.trialGranted).length, 3);
});

engineTest('storage: removeInstance removes what every port stored for an instance, and says whether there was anything', async (t, at) => {
  const s = await at.open();
  const { record } = await s.instances.create({ name: 'doomed' });
  const id = record.id;
  await s.credits.add(id, 5);
  await s.auth.write(id, authSnapshot(1));
  await s.messages.recordOutgoing(id, outgoing('MSG1', 'chat@s.whatsapp.net', Date.now()), true);
  await s.media.put(id, 'MSG1', { bytes: new Uint8Array([1, 2, 3]) }, Date.now());
  await s.instances.markDeleting(id);
  await s.credits.forget(id);
  t.true(await s.removeInstance(id));
  await s.instances.remove(id);
  t.is(await s.auth.read(id), null);
  t.false(await s.auth.isPaired(id));
  t.is(await s.messages.get(id, 'MSG1'), null);
  t.is(await s.media.get(id, 'MSG1'), null);
  t.false(await s.removeInstance(id));
  await s.close();
  const again = await at.open();
  t.is(again.credits.balance(id), 0);
  t.is(again.instances.getAny(id), undefined);
  t.deepEqual(await again.messages.chats(id), []);
});
