import { randomBytes } from 'node:crypto';

const ID_SEED = randomBytes(5).toString('hex').toUpperCase();
let idCounter = 0;

/**
 * WhatsApp-style message ids (upper-case hex, "3EB0..." as WhatsApp Web's): a per-process random
 * seed and a counter, unique without a random draw per message. The gateway picks the id before
 * sending, so the message is stored (pending) before it leaves.
 */
export function newMessageId(prefix = '3EB0'): string {
  idCounter = (idCounter + 1) % 0x100000000;
  return prefix + ID_SEED + idCounter.toString(16).toUpperCase().padStart(8, '0');
}
