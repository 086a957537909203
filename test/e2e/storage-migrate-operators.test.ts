/**
 * Guards the migration 2 brief (issue 25's stores in `gateway storage migrate --to URL`), end to end
 * with the built CLI and daemon (`npm run build` first): operators created on a files gateway (one
 * with `gateway operator add`, one of each role) sign in to the panel API (`POST
 * /panel/api/session` {"operator","password"}) on a PostgreSQL node set up as the migration says,
 * with their roles and instances, and a wrong password is still refused; and what the API showed on
 * the files daemon reads the same on the node: the audit log (GET /api/audit: order and times, the
 * node's new entries before them), usage per day, the instance's settings and its webhook's
 * headers and filters.
 */
import test from 'ava';
import { rm } from 'node:fs/promises';
import { DAY_MS } from '../../src/domain/clock.js';
import { utcDate } from '../../src/storage/ports/usage.js';
import { startChildDaemon, type ChildDaemon } from '../helpers/child-daemon.js';
import { runCli } from '../helpers/cli.js';
import { request, tempDir } from '../helpers/daemon.js';
import { writeFilesFixture } from '../helpers/files-fixture.js';
import { freshDatabase } from '../helpers/postgres.js';

/** What the API shows of the state the migration moves (compared on the files daemon and on the node). */
async function shown(url: string, secret: string, id: string): Promise<Record<string, unknown>> {
  const get = async (path: string): Promise<Record<string, unknown>> => {
    const res = await request(url, 'GET', path, { secret });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body as Record<string, unknown>;
  };
  const now = Date.now();
  const instance = await get(`/api/instances/${id}`);
  return {
    audit: (await get('/api/audit?limit=200')).entries,
    usage: await get(`/api/instances/${id}/usage?from=${utcDate(now - 3 * DAY_MS)}&to=${utcDate(now + DAY_MS)}`),
    settings: await get(`/api/instances/${id}/settings`),
    webhook: instance.webhook,
  };
}

test('operators made on a files gateway sign in to the panel on a PostgreSQL node after the migration; audit, usage, settings and webhook read the same', async (t) => {
  t.timeout(240_000);
  const dataDir = await tempDir('gw-migrate-ops-');
  const db = await freshDatabase();
  const daemons: ChildDaemon[] = [];
  t.teardown(async () => {
    for (const d of daemons) {
      d.kill('SIGKILL');
      await d.exited;
    }
    await db.drop();
    await rm(dataDir, { recursive: true, force: true });
  });
  // The fixture's session is "paired": its node would dial WhatsApp; here it dials a closed local port.
  const fixture = await writeFilesFixture(dataDir, { instances: 1, messages: 4, media: 0, config: { baileys: { webSocketUrl: 'ws://127.0.0.1:9' } } });
  const { id } = fixture.instances[0]!;
  const [admin] = fixture.operators;
  const added = await runCli(['operator', 'add', 'carol', '--role', 'agent', '--instances', id, '--json'], { dataDir });
  t.is(added.code, 0, added.stderr);
  const carol = { name: 'carol', password: (JSON.parse(added.stdout) as { password: string }).password };

  const files = await startChildDaemon(dataDir);
  daemons.push(files);
  const signInCarol = await request(files.url, 'POST', '/panel/api/session', { json: { operator: carol.name, password: carol.password } });
  t.is(signInCarol.status, 201, 'signs in on the files gateway (an audit entry of the product itself)');
  const before = await shown(files.url, fixture.secret, id);
  t.is((before.audit as unknown[]).length, fixture.auditEntries + 2, "the fixture's entries, carol's addition and her sign-in");
  t.like(before.settings, { calls: { autoReject: true, rejectMessage: 'No calls, please write' }, ignoreGroups: true, proxy: 'http://***@127.0.0.1:9' });
  t.like(before.webhook, { headers: ['Authorization', 'X-Tenant'], filters: { ignoreGroups: true } });
  t.like(before.usage, { sent: 6, debited: 4 });
  files.kill('SIGTERM');
  t.is(await files.exited, 0);

  const migrated = await runCli(['storage', 'migrate', '--to', db.url, '--json'], { dataDir });
  t.is(migrated.code, 0, migrated.stderr);
  t.regex(migrated.stderr, /^gateway-wide: 3 operators, \d+ audit log entries$/m);
  const report = JSON.parse(migrated.stdout) as { clusterSecret: string; operators: number; auditEntries: number; totals: Record<string, number> };
  t.like(report, { operators: 3, auditEntries: fixture.auditEntries + 2, totals: { usageDays: 3, usageSent: 6, usageDebited: 4 } });
  const init = await runCli(['init', '--database', db.url, '--force', '--cluster-secret', report.clusterSecret, '--node-id', 'node0'], { dataDir });
  t.is(init.code, 0, init.stderr);
  const node = await startChildDaemon(dataDir);
  daemons.push(node);
  t.teardown(() => {
    if (!t.passed) t.log(node.stderr().slice(-3000));
  });

  t.deepEqual(await shown(node.url, fixture.secret, id), before, 'the audit log, usage, settings and webhook read the same on the node');

  const agent = await request(node.url, 'POST', '/panel/api/session', { json: { operator: carol.name, password: carol.password } });
  t.is(agent.status, 201, JSON.stringify(agent.body));
  t.like(agent.body, { role: 'agent', operator: 'carol', instances: [{ instanceId: id }] });
  const cookie = (agent.headers.get('set-cookie') ?? '').split(';')[0]!;
  t.like((await request(node.url, 'GET', '/panel/api/session', { headers: { cookie } })).body, { role: 'agent', operator: 'carol' }, 'the session holds');
  const adminIn = await request(node.url, 'POST', '/panel/api/session', { json: { operator: admin!.name, password: admin!.password } });
  t.is(adminIn.status, 201, JSON.stringify(adminIn.body));
  t.like(adminIn.body, { role: 'admin', operator: admin!.name });
  const wrong = await request(node.url, 'POST', '/panel/api/session', { json: { operator: carol.name, password: `${carol.password}x` } });
  t.is(wrong.status, 401);

  // The node's entries come first (newest), the copied log after them, as it was.
  const audit = (await request(node.url, 'GET', '/api/audit?limit=200', { secret: fixture.secret })).body as { entries: Array<{ actor: string; action: string; outcome: string }> };
  t.like(audit.entries.slice(0, 3), [
    { actor: 'operator:carol', action: 'panel.signin', outcome: 'UNAUTHORIZED' },
    { actor: `operator:${admin!.name}`, action: 'panel.signin', outcome: 'ok' },
    { actor: 'operator:carol', action: 'panel.signin', outcome: 'ok' },
  ]);
  t.deepEqual(audit.entries.slice(3), before.audit);
});
