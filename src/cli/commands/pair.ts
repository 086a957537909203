import type { Command } from 'commander';
import qrcode from 'qrcode-terminal';
import { parseReply, retryPending, type PairReply } from '../../control/pair-protocol.js';
import { ERROR_TABLE, GatewayError } from '../../domain/errors.js';
import { isPaired } from '../../store/auth-files.js';
import { openApi, seg } from '../api.js';
import { globals, parsePhone, parsePositive } from '../context.js';

interface PairOptions {
  phone?: string;
  timeout?: number;
}

type Outcome = { ok: true } | { ok: false; exitCode: number; message: string };

/**
 * What the user sees. Human mode draws each QR (on a TTY the previous drawing is erased first, so
 * a rotation replaces it in place) and one line per status change; --json prints every reply as
 * a JSON line. Either way it decides when pairing is over.
 */
class PairView {
  private lastStatus: string | null = null;
  /** Lines of the QR drawing at the bottom of the terminal, erasable while nothing followed it. */
  private qrLines = 0;
  private qrCount = 0;

  constructor(
    private readonly json: boolean,
    private readonly byCode: boolean,
    private readonly tty: boolean,
    private readonly write: (text: string) => void,
  ) {}

  say(text: string): void {
    if (!this.json) this.print(`${text}\n`);
  }

  handle(reply: PairReply): Outcome | null {
    if (this.json) this.write(`${JSON.stringify(reply)}\n`);
    switch (reply.type) {
      case 'code':
        this.say(`Pairing code: ${reply.code.length === 8 ? `${reply.code.slice(0, 4)}-${reply.code.slice(4)}` : reply.code}`);
        this.say('On the phone: WhatsApp > Linked devices > Link a device > Link with phone number instead, then enter the code.');
        return null;
      case 'qr':
        if (!this.byCode) this.drawQr(reply.qr);
        return null;
      case 'error':
        return { ok: false, exitCode: ERROR_TABLE[reply.code].exit, message: reply.message };
      case 'status':
        if (reply.status !== this.lastStatus) {
          this.lastStatus = reply.status;
          // A QR is stale once the status moves on; on a TTY it goes away instead of lingering.
          if (reply.status !== 'qr_code_generated') this.eraseQr();
          this.say(`status: ${reply.status}${reply.reason ? ` (${reply.reason})` : ''}`);
        }
        if (reply.status === 'connected') return { ok: true };
        if (reply.status === 'disconnected' && !retryPending(reply.reason)) {
          return { ok: false, exitCode: 1, message: `pairing stopped: ${reply.reason ?? 'disconnected'}` };
        }
        return null;
    }
  }

  private drawQr(qr: string): void {
    if (this.json) return;
    this.eraseQr();
    this.qrCount += 1;
    let drawing = '';
    qrcode.generate(qr, { small: true }, (text) => (drawing = text));
    const header = `Scan with WhatsApp > Linked devices > Link a device${this.qrCount > 1 ? ` (QR refreshed, #${this.qrCount})` : ''}:`;
    const block = `${header}\n${drawing.replace(/\n+$/, '')}\n`;
    this.print(block);
    this.qrLines = this.tty ? block.split('\n').length - 1 : 0;
  }

  private eraseQr(): void {
    if (this.qrLines === 0) return;
    // Up to the first line of the drawing, then clear to the end of the screen.
    this.write(`\x1b[${this.qrLines}A\r\x1b[J`);
    this.qrLines = 0;
  }

  private print(text: string): void {
    // Anything printed below a drawing pins it: it can no longer be erased line-exactly.
    this.qrLines = 0;
    this.write(text);
  }
}

/** Follows the pairing stream of the daemon that answers `api` until an outcome. */
async function follow(open: (onLine: (value: unknown) => void) => Promise<{ closed: Promise<void>; close(): void }>, view: PairView, timeoutMs: number | null): Promise<Outcome> {
  let settle: (outcome: Outcome) => void = () => undefined;
  const result = new Promise<Outcome>((resolve) => (settle = resolve));
  const stream = await open((value) => {
    const reply = parseReply(JSON.stringify(value));
    const outcome = reply ? view.handle(reply) : null;
    if (outcome) settle(outcome);
  });
  void stream.closed.then(() => settle({ ok: false, exitCode: 1, message: 'the daemon ended the pairing before the instance connected (is it shutting down?)' }));
  const timer = timeoutMs === null ? null : setTimeout(() => settle({ ok: false, exitCode: 1, message: `timed out after ${timeoutMs / 1000} s` }), timeoutMs);
  const interrupted = (): void => settle({ ok: false, exitCode: 130, message: 'interrupted' });
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const outcome = await result;
  if (timer) clearTimeout(timer);
  process.off('SIGINT', interrupted);
  process.off('SIGTERM', interrupted);
  stream.close();
  return outcome;
}

/** `gateway pair ID [--phone +N] [--timeout SECONDS]`; exit 0 connected, 1 gave up, 2 usage, 4 unknown instance. */
export function registerPair(program: Command): void {
  program
    .command('pair <id>')
    .description('pair an instance with WhatsApp: draws the QR in the terminal (redrawn as it rotates), exits 0 once connected; drives the running daemon when there is one')
    .option('--phone <+number>', 'pair by code for this phone (E.164) instead of scanning a QR', parsePhone)
    .option('--timeout <seconds>', 'give up after this many seconds (default: when the connection itself gives up)', parsePositive)
    .action(async (id: string, opts: PairOptions, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const view = new PairView(json, opts.phone !== undefined, process.stdout.isTTY === true, (text) => process.stdout.write(text));
      const timeoutMs = opts.timeout === undefined ? null : opts.timeout * 1000;
      // With no daemon this command holds the data dir as `pair` until it ends, so a daemon started
      // meanwhile cannot open a second socket on the same credentials.
      const api = await openApi(dataDir, { kind: 'pair' });
      let outcome: Outcome;
      try {
        const instance = await api.call('GET', `/api/instances/${seg(id)}`);
        if (api.via === 'local') {
          if (instance.sandbox === true) {
            throw new GatewayError(
              'CONFLICT',
              `${id} is a sandbox instance and no daemon is running: nothing would scan its QR. Start the daemon (gateway start), then run gateway pair again or POST /api/${id}/sandbox/scan`,
            );
          }
          // Already paired: connecting here would only receive (and acknowledge) the offline backlog
          // with nobody to store it. The daemon picks the session up.
          if (isPaired(dataDir, id)) {
            view.say(`${id} is already paired; start the daemon (gateway start) to connect it.`);
            return;
          }
          view.say(`No daemon is running: pairing ${id} directly; the credentials stay in the data dir for the daemon.`);
        } else {
          view.say(`Pairing ${id} through the running daemon.`);
        }
        outcome = await follow((onLine) => api.stream('POST', `/control/instances/${seg(id)}/pair`, opts.phone !== undefined ? { phone: opts.phone } : {}, onLine), view, timeoutMs);
      } finally {
        // With no daemon: stops the connection (flushing its credentials) and releases the data dir.
        await api.close();
      }
      if (!outcome.ok) {
        process.stderr.write(`gateway: ${outcome.message}\n`);
        process.exit(outcome.exitCode);
      }
      view.say(api.via === 'daemon' ? 'Connected: the daemon is using the new session.' : 'Connected: credentials saved; start the daemon (gateway start) to use them.');
      // Baileys may leave timers behind after stop(); the work is done and the output written.
      if (api.via === 'local') process.exit(0);
    });
}
