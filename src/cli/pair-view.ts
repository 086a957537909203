import qrcode from 'qrcode-terminal';
import { retryPending, type PairReply } from '../pairing/pair-protocol.js';
import { ERROR_TABLE } from '../domain/errors.js';

export type Outcome = { ok: true } | { ok: false; exitCode: number; message: string };

/**
 * What the user sees. Human mode draws each QR (on a TTY the previous drawing is erased first, so
 * a rotation replaces it in place) and one line per status change; --json prints every reply as
 * a JSON line. Either way it decides when pairing is over.
 */
export class PairView {
  private lastStatus: string | null = null;
  private lastReason: string | null = null;
  /** Lines of the QR drawing at the bottom of the terminal, erasable while nothing followed it. */
  private qrLines = 0;
  private qrCount = 0;

  constructor(
    private readonly json: boolean,
    private readonly byCode: boolean,
    private readonly tty: boolean,
    private readonly write: (text: string) => void,
    private readonly writeErr: (text: string) => void = (text) => process.stderr.write(text),
  ) {}

  say(text: string): void {
    if (!this.json) this.print(`${text}\n`);
  }

  /** A line for stderr (a log line worth showing); on a terminal it pins the drawing above it. */
  note(text: string): void {
    this.qrLines = 0;
    this.writeErr(`${text}\n`);
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
        // A new reason under the same status is news too: each retry says why and when.
        if (reply.status !== this.lastStatus || (reply.status === 'disconnected' && reply.reason !== this.lastReason)) {
          this.lastStatus = reply.status;
          this.lastReason = reply.reason;
          // A QR is stale once the status moves on; on a TTY it goes away instead of lingering.
          if (reply.status !== 'qr_code_generated') this.eraseQr();
          this.say(`status: ${reply.status}${reply.reason ? ` (${reply.reason})` : ''}`);
        }
        if (reply.status === 'connected') return { ok: true };
        if (reply.status !== 'disconnected') return null;
        if (reply.unreachable !== undefined) {
          // Retrying cannot help while DNS, the network or TLS stops every attempt: say so now.
          return {
            ok: false,
            exitCode: 1,
            message: `WhatsApp cannot be reached from this host (${reply.unreachable}); check DNS, the network and the firewall (or baileys.webSocketUrl in config.json), then run gateway pair again`,
          };
        }
        if (!retryPending(reply.reason, reply.next)) return { ok: false, exitCode: 1, message: `pairing stopped: ${reply.reason ?? 'disconnected'}` };
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

