import test from 'ava';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { askPairingCode } from '../../src/connection/baileys/pairing-code.js';
import { GatewayError } from '../../src/domain/errors.js';

// Issue 24 (link-code pairing through the double): Baileys rc14's requestPairingCode does not wait
// for WhatsApp's answer, so the gateway awaits the answer to the request's own id. The accepted
// and the 400 cases run against real Baileys and the protocol double
// (test/e2e/double-pairing-code.test.ts); these are the other answers, on a socket that numbers
// its requests the way Baileys does (`PREFIX-N`, the request taking the next tag).

function socket(answer: (id: string) => BinaryNode | undefined) {
  let epoch = 1;
  const asked: string[] = [];
  return {
    asked,
    generateMessageTag: () => `4242.77-${epoch++}`,
    // Baileys' signature is generic in what the frame is; here it is always a BinaryNode.
    waitForMessage: async <T>(id: string): Promise<T | undefined> => {
      await new Promise((r) => setTimeout(r, 5));
      return answer(id) as T | undefined;
    },
    requestPairingCode: async (phone: string) => {
      asked.push(`4242.77-${epoch++}`);
      return `CODE${phone.slice(-4)}`;
    },
  };
}

const error = (id: string, code: string, text: string): BinaryNode => ({ tag: 'iq', attrs: { id, type: 'error' }, content: [{ tag: 'error', attrs: { code, text } }] });

test('the answer awaited is the one to the request itself: a result hands out the code', async (t) => {
  const sock = socket((id) => (id === '4242.77-2' ? { tag: 'iq', attrs: { id, type: 'result' } } : undefined));
  t.is(await askPairingCode(sock, '15551234567', '+15551234567'), 'CODE4567');
  t.deepEqual(sock.asked, ['4242.77-2']);
});

test('other refusals (429 rate-overlimit, 452 feature-not-available) are 503 CONNECTION_NOT_READY naming them', async (t) => {
  for (const [code, text] of [['429', 'rate-overlimit'], ['452', 'feature-not-available']] as const) {
    const sock = socket((id) => error(id, code, text));
    const err = await t.throwsAsync(askPairingCode(sock, '15551234567', '+15551234567'), { instanceOf: GatewayError });
    t.is(err.code, 'CONNECTION_NOT_READY');
    t.regex(err.message, new RegExp(`WhatsApp refused a pairing code for \\+15551234567 \\(${code} ${text}\\)`));
  }
});

test('no answer (the socket closed, or the wait ran out) is 503, not a code nobody can use', async (t) => {
  const err = await t.throwsAsync(askPairingCode(socket(() => undefined), '15551234567', '+15551234567'), { instanceOf: GatewayError });
  t.is(err.code, 'CONNECTION_NOT_READY');
  t.regex(err.message, /did not answer/);
});

test('a socket that cannot name its requests (a test fake) is asked directly', async (t) => {
  t.is(await askPairingCode({ requestPairingCode: async () => 'ABCD1234' }, '15551234567', '+15551234567'), 'ABCD1234');
});
