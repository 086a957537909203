import type { Command } from 'commander';
import { parseReply } from '../../pairing/pair-protocol.js';
import { GatewayError } from '../../domain/errors.js';
import { pairLogger } from '../pair-log.js';
import { PairView, type Outcome } from '../pair-view.js';
import { isPaired } from '../../storage/files/auth-files.js';
import { openApi, seg } from '../api.js';
import { globals, parsePhone, parsePositive } from '../context.js';

interface PairOptions {
  phone?: string;
  timeout?: number;
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
      const api = await openApi(dataDir, { kind: 'pair', logger: pairLogger((line) => view.note(line)) });
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
