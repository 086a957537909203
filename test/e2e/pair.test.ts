import test from 'ava';
import { spawn } from 'node:child_process';
import { GATEWAY_BIN, runCli } from '../helpers/cli.js';
import { startTestDaemon, waitFor, type TestDaemon } from '../helpers/daemon.js';
import { FakeConnection, fakeFactory } from '../helpers/fake-connection.js';
import type { ConnectionFactory } from '../../src/connection/types.js';

interface PairChild {
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** Waits until stdout matches; returns the stdout seen so far. */
  until(pattern: RegExp, label: string): Promise<string>;
  kill(): void;
}

/** `gateway pair` as a real child process whose output can be watched while it runs. */
function spawnPair(dataDir: string, args: string[]): PairChild {
  const child = spawn(process.execPath, [GATEWAY_BIN, '--data-dir', dataDir, 'pair', ...args], {
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    stdout: () => out,
    stderr: () => err,
    exited,
    until: (pattern, label) => waitFor(() => (pattern.test(out) ? out : null), 15_000, `${label}; stdout: ${out}; stderr: ${err}`),
    kill: () => void child.kill('SIGKILL'),
  };
}

async function withPairDaemon(run: (d: TestDaemon, made: Map<string, FakeConnection>) => Promise<void>, factory = fakeFactory()): Promise<void> {
  const d = await startTestDaemon({ whatsapp: factory.factory });
  try {
    await run(d, factory.made);
  } finally {
    await d.close();
  }
}

test('pair draws the QR of the daemon connection, redraws it on rotation and exits 0 once connected', async (t) => {
  await withPairDaemon(async (d, made) => {
    const { id } = await d.createInstance({ sandbox: false });
    const fake = made.get(id)!;
    const pair = spawnPair(d.dataDir, [id]);
    try {
      await pair.until(/status: initializing/, 'the current status first');
      const before = pair.stdout().length;
      fake.set('qr_code_generated', 'ref-one,noise,identity,adv');
      const first = (await pair.until(/Scan with WhatsApp[^\n]*\n[▀▄█ ]+\n/, 'a QR drawing')).slice(before);
      t.regex(first, /status: qr_code_generated/);
      t.notRegex(first, /ref-one/, 'the QR is drawn, not printed');

      const drawn = pair.stdout().length;
      fake.set('qr_code_generated', 'ref-two,noise,identity,adv');
      const second = (await pair.until(/QR refreshed/, 'a redrawn QR')).slice(drawn);
      t.regex(second, /[▀▄█]{10}/);
      t.not(drawing(second), drawing(first), 'a new payload draws a new code');

      fake.set('connected');
      t.is(await pair.exited, 0, pair.stderr());
      t.regex(pair.stdout(), /status: connected\nConnected/);
    } finally {
      pair.kill();
    }
  });
});

/** The block characters of the first drawing in `text`. */
function drawing(text: string): string {
  return text.split('\n').filter((l) => /^[▀▄█ ]{20,}$/.test(l)).join('\n');
}

test('pair --json prints one JSON line per status and QR, in order', async (t) => {
  await withPairDaemon(async (d, made) => {
    const { id } = await d.createInstance({ sandbox: false });
    const pair = spawnPair(d.dataDir, [id, '--json']);
    try {
      await pair.until(/"initializing"/, 'the current status');
      made.get(id)!.set('qr_code_generated', 'qr-1');
      await pair.until(/"qr-1"/, 'first QR');
      made.get(id)!.set('qr_code_generated', 'qr-2');
      await pair.until(/"qr-2"/, 'second QR');
      made.get(id)!.set('connected');
      t.is(await pair.exited, 0, pair.stderr());
      const lines = pair.stdout().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      t.deepEqual(lines, [
        { type: 'status', status: 'initializing', reason: null },
        { type: 'status', status: 'qr_code_generated', reason: null },
        { type: 'qr', qr: 'qr-1' },
        { type: 'status', status: 'qr_code_generated', reason: null },
        { type: 'qr', qr: 'qr-2' },
        { type: 'status', status: 'connected', reason: null },
      ]);
    } finally {
      pair.kill();
    }
  });
});

test('pair restarts a connection that gave up, and exits 1 with the reason when it gives up again', async (t) => {
  await withPairDaemon(async (d, made) => {
    const { id } = await d.createInstance({ sandbox: false });
    const fake = made.get(id)!;
    fake.set('disconnected');
    const pair = spawnPair(d.dataDir, [id]);
    try {
      await pair.until(/status: initializing/, 'start() called on the daemon connection');
      t.is(fake.status, 'initializing');
      fake.status = 'disconnected';
      fake.reason = 'QR not scanned (5 codes shown)';
      fake.hooks.onStatus({ from: 'initializing', to: 'disconnected', reason: fake.reason });
      t.is(await pair.exited, 1);
      t.regex(pair.stderr(), /^gateway: pairing stopped: QR not scanned \(5 codes shown\)\n$/);
    } finally {
      pair.kill();
    }
  });
});

test('pair keeps waiting while the connection waits out a backoff', async (t) => {
  await withPairDaemon(async (d, made) => {
    const { id } = await d.createInstance({ sandbox: false });
    const fake = made.get(id)!;
    const pair = spawnPair(d.dataDir, [id, '--json']);
    try {
      await pair.until(/"initializing"/, 'the current status');
      fake.hooks.onStatus({ from: 'initializing', to: 'disconnected', reason: 'connection closed (408), retrying in 2 s' });
      await pair.until(/retrying in 2 s/, 'the retry reported');
      fake.set('connected');
      t.is(await pair.exited, 0, pair.stderr());
    } finally {
      pair.kill();
    }
  });
});

/** A fake that pairs by code the way BaileysConnection does: the code comes with the first QR. */
function codeFactory(): { factory: () => ConnectionFactory; made: Map<string, FakeConnection>; phones: string[] } {
  const made = new Map<string, FakeConnection>();
  const phones: string[] = [];
  class CodeFake extends FakeConnection {
    async requestPairingCode(phone: string): Promise<string> {
      phones.push(phone);
      this.set('qr_code_generated', 'qr-for-code');
      return 'ABCD1234';
    }
  }
  return {
    made,
    phones,
    factory: () => (record, hooks) => {
      const c = new CodeFake(record.id, hooks);
      made.set(record.id, c);
      return c;
    },
  };
}

test('pair --phone prints the pairing code from the daemon connection, then follows it to connected', async (t) => {
  const codes = codeFactory();
  await withPairDaemon(async (d, made) => {
    const { id } = await d.createInstance({ sandbox: false });
    const human = spawnPair(d.dataDir, [id, '--phone', '+15551234567']);
    try {
      await human.until(/Pairing code: ABCD-1234/, 'the code');
      t.notRegex(human.stdout(), /Scan with/, 'no QR when pairing by code');
      made.get(id)!.set('connected');
      t.is(await human.exited, 0, human.stderr());
    } finally {
      human.kill();
    }
    t.deepEqual(codes.phones, ['+15551234567']);

    const { id: id2 } = await d.createInstance({ sandbox: false });
    const json = spawnPair(d.dataDir, [id2, '--phone', '+15551234567', '--json']);
    try {
      await json.until(/"qr-for-code"/, 'the state after the code');
      made.get(id2)!.set('connected');
      t.is(await json.exited, 0, json.stderr());
      const first = JSON.parse(json.stdout().split('\n')[0]!) as unknown;
      t.deepEqual(first, { type: 'code', code: 'ABCD1234' });
    } finally {
      json.kill();
    }
  }, codes);
});

test('pair --phone on a sandbox instance is a usage error; a bad --phone is exit 2 before anything runs', async (t) => {
  await withPairDaemon(async (d) => {
    const { id } = await d.createInstance({ sandbox: true });
    const r = await runCli(['pair', id, '--phone', '+15551234567'], { dataDir: d.dataDir });
    t.is(r.code, 2, r.stderr);
    t.regex(r.stderr, /pairing by code needs a WhatsApp instance/);
    const bad = await runCli(['pair', id, '--phone', '5551234567'], { dataDir: d.dataDir });
    t.is(bad.code, 2);
    t.regex(bad.stderr, /E\.164/);
  });
});

test('pair of an unknown instance exits 4 through the daemon', async (t) => {
  await withPairDaemon(async (d) => {
    for (const id of ['inst_doesnotexist', '../../etc/passwd']) {
      const r = await runCli(['pair', id], { dataDir: d.dataDir });
      t.is(r.code, 4, r.stderr);
      t.regex(r.stderr, /^gateway: no instance with id/);
    }
  });
});

test('pair drives a sandbox instance in the daemon: sandbox/scan connects it', async (t) => {
  await withPairDaemon(async (d) => {
    const { id, key } = await d.createInstance({ sandbox: true });
    const pair = spawnPair(d.dataDir, [id, '--json']);
    try {
      await pair.until(/"type":"qr","qr":"sandbox:/, 'the sandbox QR');
      const scan = await d.request('POST', `/api/${id}/sandbox/scan`, { key });
      t.is(scan.status, 200);
      t.is(await pair.exited, 0, pair.stderr());
      t.regex(pair.stdout(), /"status":"connected"/);
    } finally {
      pair.kill();
    }
  });
});

test('pair of an instance that is already connected exits 0 at once', async (t) => {
  await withPairDaemon(async (d) => {
    const { id } = await d.connectedSandbox();
    const r = await runCli(['pair', id], { dataDir: d.dataDir });
    t.is(r.code, 0, r.stderr);
    t.regex(r.stdout, /status: connected/);
  });
});
