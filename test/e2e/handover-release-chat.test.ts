/**
 * Guards issue 21 item 19 (docs that disagree with the code), the handover part: the route
 * releases by `{"phone"}` or `{"chatId"}` and the README's CLI table says `release ID
 * +PHONE|CHAT_ID`, but the CLI refused a chat id. It now takes either. Runs the built CLI against
 * a daemon with a sandbox instance whose flow hands a chat over.
 */
import test from 'ava';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon } from '../helpers/daemon.js';

const SUPPORT_MENU = fileURLToPath(new URL('../../config/flows/support-menu.json', import.meta.url));

test('handover release takes a chat id as well as +PHONE', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const { id, key } = await d.connectedSandbox();
  t.is((await runCli(['flow', 'set', id, SUPPORT_MENU], { dataDir: d.dataDir })).code, 0);
  for (const message of ['hi', '3']) {
    await d.request('POST', `/api/${id}/sandbox/inbound`, { key, json: { from: '+15551234567', message, name: 'Ann' } });
    await d.flows.idle();
  }
  const open = (await d.request('GET', `/api/${id}/handovers`, { key })).body.handovers as Array<{ chatId: string }>;
  t.is(open.length, 1);
  const r = await runCli(['handover', 'release', id, open[0]!.chatId, '--json'], { dataDir: d.dataDir });
  t.is(r.code, 0, r.stderr);
  t.deepEqual(JSON.parse(r.stdout), { instanceId: id, phone: '+15551234567', chatId: '15551234567@s.whatsapp.net', released: true });
  t.deepEqual((await d.request('GET', `/api/${id}/handovers`, { key })).body.handovers, []);
  const bad = await runCli(['handover', 'release', id, 'someone'], { dataDir: d.dataDir });
  t.is(bad.code, 2);
  t.regex(bad.stderr, /^gateway: expected \+PHONE .* or a chat id like 15551234567@s\.whatsapp\.net/);
});
