import { getBinaryNodeChild, type BinaryNode, type WASocket } from '@whiskeysockets/baileys';
import { GatewayError } from '../../domain/errors.js';
import type { SocketLike } from './options.js';

/** How long WhatsApp gets to answer the request (it answers in one round trip). */
const ANSWER_MS = 20_000;

/** What this needs of the socket; the real one has it all, a unit test's fake socket may lack the last two. */
type PairingSocket = Pick<SocketLike, 'requestPairingCode'> & Partial<Pick<WASocket, 'generateMessageTag' | 'waitForMessage'>>;

/**
 * Asks WhatsApp for a pairing code for `phone` and returns it once WhatsApp accepted the request.
 *
 * Baileys rc14 sends the request (`<iq><link_code_companion_reg stage="companion_hello">`) with
 * `sendNode`, not `query`: its promise resolves with the code whatever WhatsApp answers, so a
 * number WhatsApp will not pair (`400 bad-request`: no account, or too many codes asked) got a code
 * that can never work. The request's id is the socket's next message tag (Baileys generates it
 * synchronously as requestPairingCode starts), so taking one tag first names it, and the answer is
 * awaited before the code is handed out.
 */
export async function askPairingCode(sock: PairingSocket, digits: string, phone: string): Promise<string> {
  if (!sock.generateMessageTag || !sock.waitForMessage) return sock.requestPairingCode(digits);
  const taken = /^(.*?)(\d+)$/.exec(sock.generateMessageTag());
  if (!taken) return sock.requestPairingCode(digits);
  const id = `${taken[1]}${Number(taken[2]) + 1}`;
  const answered = sock.waitForMessage<BinaryNode>(id, ANSWER_MS);
  // Settled below; a request that throws first must not leave it unhandled.
  answered.catch(() => undefined);
  const code = await sock.requestPairingCode(digits);
  let answer: BinaryNode | undefined;
  try {
    answer = await answered;
  } catch {
    answer = undefined;
  }
  if (!answer) throw new GatewayError('CONNECTION_NOT_READY', 'WhatsApp did not answer the pairing-code request (the connection closed or timed out); try again');
  if (answer.attrs.type === 'error') {
    const error = getBinaryNodeChild(answer, 'error');
    const said = `${error?.attrs.code ?? '?'} ${error?.attrs.text ?? 'error'}`;
    if (error?.attrs.code === '400') {
      throw new GatewayError('INVALID_PHONE', `WhatsApp refused a pairing code for ${phone} (${said}): the number has no WhatsApp account, or too many codes were asked for it; check it, or wait before asking again`);
    }
    throw new GatewayError('CONNECTION_NOT_READY', `WhatsApp refused a pairing code for ${phone} (${said}); try again later or pair by QR`);
  }
  return code;
}
