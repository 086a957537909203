import { parentPort } from 'node:worker_threads';
import { rawKeyPairInto } from './raw-key-pair.js';

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

port.on('message', ({ count }: KeyPairRequest) => {
  const out = new Uint8Array(count * 64);
  for (let i = 0; i < count; i++) rawKeyPairInto(out, i * 64);
  port.postMessage(out.buffer, [out.buffer]);
});
