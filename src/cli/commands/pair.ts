import { isPaired } from '../../store/auth-files.js';
import { openStandalone } from '../standalone.js';
import { InvalidArgumentError, type Command } from 'commander';
import qrcode from 'qrcode-terminal';
import type { ConnectionObserver } from '../../connection/manager.js';
import type { ConnectionHooks } from '../../connection/types.js';
import { ControlUnavailableError, openControlStream } from '../../daemon/control/client.js';
import { retryPending, type PairReply, type PairRequest } from '../../daemon/control/protocol.js';
import { runPairSession } from '../../daemon/control/session.js';
import { runningDaemon, type DaemonInfo } from '../../daemon/daemon-lock.js';
import { UserError, errorMessage, type ErrorCode } from '../../domain/errors.js';
import { isE164 } from '../../domain/phone.js';
import { storePaths } from '../../store/paths.js';
import { globals, openContext, parsePositive, requireInstance } from '../context.js';

interface PairOptions {
  phone?: string;
  timeout?: number;
}

type Outcome = { ok: true } | { ok: false; exitCode: number; message: string };

function parsePhone(value: string): string {
  if (!isE164(value)) throw new InvalidArgumentError('expected an E.164 number like +15551234567');
  return value;
}

function exitCodeFor(code: ErrorCode): number {
  if (code === 'NOT_FOUND') return 4;
  if (code === 'INVALID_PHONE' || code === 'INVALID_FIELD') return 2;
  return 1;
}

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
        return { ok: false, exitCode: exitCodeFor(reply.code), message: reply.message };
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

/** Drives the daemon's own connection over its control socket. */
async function pairThroughDaemon(socketPath: string, daemon: DaemonInfo, request: PairRequest, view: PairView, timeoutMs: number | null): Promise<Outcome> {
  let settle: (outcome: Outcome) => void = () => undefined;
  const result = new Promise<Outcome>((resolve) => (settle = resolve));
  let stream;
  try {
    stream = await openControlStream(socketPath, request, (reply) => {
      const outcome = view.handle(reply);
      if (outcome) settle(outcome);
    });
  } catch (err) {
    const why = err instanceof ControlUnavailableError ? err.errno : errorMessage(err);
    throw new UserError(
      `a gateway process (pid ${daemon.pid}) holds the data dir but its control socket does not answer (${why}); ` +
        'if it is another `gateway pair`, wait for it; if it is the daemon, restart it',
    );
  }
  view.say(`Pairing ${request.instanceId} through the running daemon (pid ${daemon.pid}).`);
  void stream.closed.then(() => settle({ ok: false, exitCode: 1, message: 'the daemon ended the pairing before the instance connected (is it shutting down?)' }));
  const timer = timeoutMs === null ? null : setTimeout(() => settle({ ok: false, exitCode: 1, message: `timed out after ${timeoutMs / 1000} s` }), timeoutMs);
  const outcome = await result;
  if (timer) clearTimeout(timer);
  stream.close();
  return outcome;
}

/**
 * No daemon: open the instance's WhatsApp connection here, with the daemon's options, and stop it
 * once connected so the credentials are flushed for the daemon. The daemon lock is held meanwhile,
 * so a daemon started now cannot open a second socket on the same credentials.
 */
async function pairStandalone(cmd: Command, id: string, phone: string | undefined, view: PairView, timeoutMs: number | null): Promise<Outcome> {
  const ctx = await openContext(cmd);
  const record = requireInstance(ctx, id);
  if (record.sandbox) {
    throw new UserError(
      `${id} is a sandbox instance and no daemon is running: nothing would scan its QR. ` +
        `Start the daemon (gateway start), then run gateway pair again or POST /api/${id}/sandbox/scan`,
    );
  }
  // Already paired: connecting here would only receive (and acknowledge) the offline backlog with
  // nobody to store it. The daemon picks the session up.
  if (isPaired(ctx.dataDir, id)) {
    view.say(`${id} is already paired; start the daemon (gateway start) to connect it.`);
    return { ok: true };
  }
  const observers = new Set<ConnectionObserver>();
  const notify: ConnectionObserver = (event) => {
    for (const observer of [...observers]) observer(event);
  };
  const opened = await openStandalone(ctx, record, (logger): ConnectionHooks => ({
    onStatus: (change) => notify({ type: 'status', change }),
    onQr: (qr) => notify({ type: 'qr', qr }),
    onMessage: async (message) => {
      // Nobody stores events without the daemon; pairing stops at `connected`, so this is rare.
      logger.warn({ instanceId: id, messageId: message.messageId }, 'a message arrived while pairing without the daemon; it is not delivered');
    },
  }));
  if (!opened) throw new UserError('a daemon started on this data dir meanwhile; run gateway pair again to pair through it');
  const { connection, release } = opened;
  let cleanup = (): void => undefined;
  try {
    view.say(`No daemon is running: pairing ${id} directly; the credentials stay in the data dir for the daemon.`);
    const outcome = await new Promise<Outcome>((resolve) => {
      const session = runPairSession(
        {
          connection,
          observe: (observer) => {
            observers.add(observer);
            return () => observers.delete(observer);
          },
        },
        phone,
        (reply) => {
          const o = view.handle(reply);
          if (o) resolve(o);
        },
        () => undefined,
      );
      const timer = timeoutMs === null ? null : setTimeout(() => resolve({ ok: false, exitCode: 1, message: `timed out after ${timeoutMs / 1000} s` }), timeoutMs);
      const interrupted = (): void => resolve({ ok: false, exitCode: 130, message: 'interrupted' });
      process.once('SIGINT', interrupted);
      process.once('SIGTERM', interrupted);
      cleanup = () => {
        session.cancel();
        if (timer) clearTimeout(timer);
        process.off('SIGINT', interrupted);
        process.off('SIGTERM', interrupted);
      };
    });
    cleanup();
    // Flushes the credentials (and, when pairing failed, ends the socket) before the lock goes.
    await connection.stop();
    return outcome;
  } finally {
    cleanup();
    await release();
  }
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
      const daemon = await runningDaemon(dataDir);
      let outcome: Outcome;
      if (daemon) {
        const request: PairRequest = { op: 'pair', instanceId: id, ...(opts.phone !== undefined ? { phone: opts.phone } : {}) };
        outcome = await pairThroughDaemon(storePaths(dataDir).controlSocket, daemon, request, view, timeoutMs);
      } else {
        outcome = await pairStandalone(cmd, id, opts.phone, view, timeoutMs);
      }
      if (!outcome.ok) throw new UserError(outcome.message, outcome.exitCode);
      view.say(daemon ? 'Connected: the daemon is using the new session.' : 'Connected: credentials saved; start the daemon (gateway start) to use them.');
      // Baileys may leave timers behind after stop(); the work is done and the output written.
      if (!daemon) process.exit(0);
    });
}
