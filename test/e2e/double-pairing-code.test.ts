import test from 'ava';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { startChildDaemon, type ChildDaemon } from '../helpers/child-daemon.js';
import { GATEWAY_BIN, runCli } from '../helpers/cli.js';
import { prepareDataDir, request, tempDir, waitFor, type ApiResponse } from '../helpers/daemon.js';
import { FAST_BAILEYS } from '../protocol-double/harness.js';
import { childPreloadEnv, ProtocolDouble } from '../protocol-double/index.js';
import { LINK_CODE_ALPHABET, LinkCodeError } from '../protocol-double/link-code.js';
import { mediaTrustEnv } from '../protocol-double/media.js';

// Issue 24, "extend the double: link-code pairing, which POST /pairing-code still lacks there":
// pairing by code through the BUILT daemon (bin/gateway, a child process; `npm run build` first)
// and real Baileys against the protocol double, whose phone plays WhatsApp's side of the link-code
// exchange (test/protocol-double/link-code.ts). Guards: the code the route answers pairs the
// instance when typed on the phone, and the keys that came out of it carry messages both ways; a
// wrong code does not pair, and the instance keeps offering pairing; a number WhatsApp will not
// pair is an error from the route (it was a code that could never work: Baileys does not wait for
// WhatsApp's answer, see src/connection/baileys/pairing-code.ts); `gateway pair --phone` prints the
// code and exits 0 once the phone typed it.

const CODE_RE = new RegExp(`^[${LINK_CODE_ALPHABET}]{8}$`);

let double: ProtocolDouble;
let daemon: ChildDaemon;
let dataDir: string;
let secret: string;

test.before(async () => {
  double = await ProtocolDouble.start();
  dataDir = await tempDir('gw-double-code-');
  secret = await prepareDataDir(dataDir, {
    sending: { minIntervalMs: 0, jitterMs: 0 },
    plans: { initialCredits: 100 },
    baileys: { ...FAST_BAILEYS, logLevel: process.env.PROTOCOL_DOUBLE_DEBUG === '1' ? 'debug' : 'warn', webSocketUrl: double.url },
  });
  daemon = await startChildDaemon(dataDir, [], { ...childPreloadEnv(), ...mediaTrustEnv(double.media.hostname) });
});

test.after.always(async () => {
  daemon?.kill('SIGKILL');
  await daemon?.exited;
  await double?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test.afterEach.always((t) => {
  if (!t.passed) t.log(`daemon output:\n${daemon.stdout().slice(-4000)}\n${daemon.stderr().slice(-4000)}`);
});

async function createInstance(): Promise<{ id: string; api: (method: string, path: string, json?: unknown) => Promise<ApiResponse> }> {
  const created = await request(daemon.url, 'POST', '/api/instances/create', { secret, json: { sandbox: false } });
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
  const id = created.body.instanceId as string;
  const key = created.body.apiKey as string;
  return { id, api: (method, path, json) => request(daemon.url, method, `/api/${id}${path}`, { key, ...(json === undefined ? {} : { json }) }) };
}

test.serial('POST /pairing-code answers a code; the phone typing it pairs the instance, which then sends and receives with the keys it got', async (t) => {
  const phone = '+15550000011';
  const account = double.account('15550000011');
  const { api } = await createInstance();

  const res = await api('POST', '/pairing-code', { phone });
  t.is(res.status, 200, JSON.stringify(res.body));
  const code = res.body.code as string;
  t.regex(code, CODE_RE);

  // The phone was told (and shows which browser asks); the code itself is what the person carries over.
  const asked = await double.linkCode.nextRequest(phone);
  t.is(asked.phone, phone);
  t.true(asked.pushNotification);
  t.regex(asked.platformDisplay, /\(.+\)/);
  t.is(asked.session.kind, 'registration');

  const device = await double.enterCode(code, { phone: account.phone });
  t.is(device.account, account);
  t.deepEqual(asked.attempts.map((a) => a.outcome), ['linked']);
  await waitFor(async () => (await api('GET', '/status')).body.status === 'connected', 20_000, 'connected');
  await double.synced(device, 15_000);
  t.is(double.logins().at(-1)?.device, device, 'the restart after pairing logged in as the linked device');

  // Out: the contact decrypts what the gateway sends with the session the new keys started.
  const alice = await double.contact('+15550000211', { name: 'Alice' });
  const sent = await api('POST', '/send', { phone: alice.phone, message: 'paired by code' });
  t.is(sent.status, 200, JSON.stringify(sent.body));
  const m = await alice.nextMessage();
  t.is(m.id, sent.body.messageId as string);
  t.is(m.text, 'paired by code');
  t.is(m.sender.jid, device.jid);

  // In: the contact writes to the account; the gateway decrypts and stores it.
  const replyId = await alice.sendText(double.accountJid(account.phone), 'got it');
  const got = await waitFor(async () => {
    const r = await api('GET', `/messages/${replyId}`);
    return r.status === 200 ? r : null;
  }, 15_000, 'the reply stored');
  t.like(got.body, { messageId: replyId, chatId: alice.jid, fromMe: false, text: 'got it' });
  t.deepEqual(double.errors, []);
});

test.serial('a wrong code does not pair: the phone fails, the instance stays qr_code_generated and unpaired; the right code then still pairs', async (t) => {
  const phone = '+15550000012';
  const account = double.account('15550000012');
  const { api } = await createInstance();
  const res = await api('POST', '/pairing-code', { phone });
  t.is(res.status, 200, JSON.stringify(res.body));
  const code = res.body.code as string;
  const asked = await double.linkCode.nextRequest(phone);
  const sessions = double.connections;

  // Another valid-looking code: the phone's key exchange runs, and the companion's key bundle does not open.
  const wrong = code === 'ABCD2345' ? 'ABCD2346' : 'ABCD2345';
  const failed = await t.throwsAsync(double.enterCode(wrong, { phone: account.phone }), { instanceOf: LinkCodeError });
  t.regex(failed.message, /couldn't link device: the key bundle does not open/);
  t.deepEqual(asked.attempts.map((a) => a.outcome), ['failed']);
  t.deepEqual(double.devicesOf(account), [], 'no device was linked');

  // What the gateway shows: still waiting to be paired (WhatsApp tells the companion nothing), the
  // same socket, no login attempted, and a QR still offered beside the code.
  await new Promise((r) => setTimeout(r, 500));
  const status = await api('GET', '/status');
  t.is(status.body.status, 'qr_code_generated', JSON.stringify(status.body));
  t.regex(String(status.body.reason), /waiting for the QR to be scanned|QR refreshed/);
  t.is(double.connections, sessions, 'no reconnect, no login');
  t.true(asked.session.ready);
  t.is((await api('GET', '/qr-code')).status, 200);

  // The phone lets the person type again while the request lasts (WhatsApp Web accepts three tries per code).
  const device = await double.enterCode(code, { phone: account.phone });
  t.deepEqual(asked.attempts.map((a) => a.outcome), ['failed', 'linked']);
  await waitFor(async () => (await api('GET', '/status')).body.status === 'connected', 20_000, 'connected');
  t.is(device.account, account);
  t.deepEqual(double.errors, []);
});

test.serial('a number WhatsApp has no account for: the route answers 400 INVALID_PHONE with WhatsApp\'s refusal, no phone is asked, QR pairing stays offered', async (t) => {
  const { api } = await createInstance();
  const before = double.linkCode.requests.length;
  const res = await api('POST', '/pairing-code', { phone: '+15559990001' });
  t.is(res.status, 400, JSON.stringify(res.body));
  t.is(res.body.error.code, 'INVALID_PHONE');
  t.regex(res.body.error.message as string, /WhatsApp refused a pairing code for \+15559990001 \(400 bad-request\)/);
  t.is(double.linkCode.requests.length, before, 'no phone was asked');
  t.like(double.linkCode.refused.at(-1), { phone: '+15559990001', reason: 'no WhatsApp account (no phone) for this number' });

  const status = await api('GET', '/status');
  t.is(status.body.status, 'qr_code_generated', JSON.stringify(status.body));
  t.is((await api('GET', '/qr-code')).status, 200);

  // The same instance can still pair by code with a number that has WhatsApp.
  double.account('15550000013');
  const again = await api('POST', '/pairing-code', { phone: '+15550000013' });
  t.is(again.status, 200, JSON.stringify(again.body));
  t.regex(again.body.code as string, CODE_RE);
});

test.serial('gateway pair --phone (no daemon) prints the code; typed on the phone it pairs and the command exits 0; an unknown number exits 2 with the refusal', async (t) => {
  // Its own data dir: `gateway pair` runs Baileys itself when no daemon holds the instance.
  const dir = await tempDir('gw-double-code-cli-');
  try {
    await prepareDataDir(dir, { baileys: { ...FAST_BAILEYS, logLevel: 'silent', webSocketUrl: double.url } });
    const created = await runCli(['instance', 'create', '--json'], { dataDir: dir });
    t.is(created.code, 0, created.stderr);
    const { instanceId: id } = JSON.parse(created.stdout) as { instanceId: string };
    const env = { ...process.env, CI: 'true', ...childPreloadEnv() };

    const refused = await runCli(['pair', id, '--phone', '+15559990002'], { dataDir: dir, env: childPreloadEnv() });
    t.is(refused.code, 2, refused.stderr);
    t.regex(refused.stderr, /WhatsApp refused a pairing code for \+15559990002 \(400 bad-request\)/);

    double.account('15550000014');
    const child = spawn(process.execPath, [GATEWAY_BIN, '--data-dir', dir, 'pair', id, '--phone', '+15550000014'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const printed = await waitFor(() => /Pairing code: (\w{4}-\w{4})/.exec(out), 20_000, `the code; ${out} ${err}`);
      // Typed as printed, with its dash.
      await double.enterCode(printed[1]!, { phone: '15550000014' });
      t.is(await exited, 0, `${out}\n${err}`);
      t.regex(out, /status: connected/);
    } finally {
      child.kill('SIGKILL');
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
