import { generateKeyPairSync } from 'node:crypto';
import { parentPort } from 'node:worker_threads';
import { X25519_PKCS8, X25519_SPKI } from './raw-keys.js';

/**
 * The thread X25519 key pairs are made on (started by key-pair-thread.ts). Each request is a count;
 * the answer is one buffer of that many pairs, 64 bytes each (the raw private half, then the raw
 * public half), handed over (transferred, not copied): one message a batch is all the event loop
 * sees of them.
 */

/** A request: how many pairs to make. */
export interface KeyPairRequest {
  count: number;
}

const port = parentPort;
if (!port) throw new Error('key-pair-worker.ts runs as a worker thread');

const SPKI_PREFIX = X25519_SPKI.length;
const PKCS8_PREFIX = X25519_PKCS8.length;

port.on('message', ({ count }: KeyPairRequest) => {
  const out = new Uint8Array(count * 64);
  for (let i = 0; i < count; i++) {
    const { publicKey, privateKey } = generateKeyPairSync('x25519', { publicKeyEncoding: { format: 'der', type: 'spki' }, privateKeyEncoding: { format: 'der', type: 'pkcs8' } });
    out.set(privateKey.subarray(PKCS8_PREFIX, PKCS8_PREFIX + 32), i * 64);
    out.set(publicKey.subarray(SPKI_PREFIX, SPKI_PREFIX + 32), i * 64 + 32);
  }
  port.postMessage(out.buffer, [out.buffer]);
});
