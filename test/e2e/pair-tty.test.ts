import { spawn } from 'node:child_process';
import qrcode from 'qrcode-terminal';
import { GATEWAY_BIN } from '../helpers/cli.js';
import { startTestDaemon, waitFor } from '../helpers/daemon.js';
import { fakeFactory } from '../helpers/fake-connection.js';
import { terminalTest } from '../helpers/terminal.js';

// util-linux `script` gives the CLI a real pseudo-terminal; without it there is nothing to test.
const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

terminalTest('on a terminal a rotated QR replaces the previous drawing in place', async (t) => {
  const fake = fakeFactory();
  const d = await startTestDaemon({ whatsapp: fake.factory });
  const { id } = await d.createInstance({ sandbox: false });
  const command = [process.execPath, GATEWAY_BIN, '--data-dir', d.dataDir, 'pair', id].map(quote).join(' ');
  const child = spawn('script', ['-qefc', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await waitFor(() => out.includes('status: initializing'), 15_000, `the first status; ${out}`);
    fake.made.get(id)!.set('qr_code_generated', 'first-qr-payload');
    await waitFor(() => /Scan with WhatsApp/.test(out), 15_000, 'the first drawing');
    // The header line plus the drawing of that payload.
    let drawing = '';
    qrcode.generate('first-qr-payload', { small: true }, (text) => (drawing = text));
    const lines = 1 + drawing.replace(/\n+$/, '').split('\n').length;
    fake.made.get(id)!.set('qr_code_generated', 'second-qr-payload');
    await waitFor(() => out.includes('QR refreshed'), 15_000, 'the second drawing');
    // Cursor up over exactly the first drawing, then clear to the end of the screen.
    t.true(out.includes(`\x1b[${lines}A\r\x1b[J`), JSON.stringify(out.slice(-200)));
    fake.made.get(id)!.set('connected');
    t.is(await exited, 0);
    t.regex(out, /status: connected/);
  } finally {
    child.kill('SIGKILL');
    await d.close();
  }
});
