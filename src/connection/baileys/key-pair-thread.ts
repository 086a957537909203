import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../domain/worker-thread.js';
import type { KeyPairRequest } from './key-pair-worker.js';

/** A Curve25519 (X25519) key pair as raw 32-byte halves. */
export interface RawKeyPair {
  private: Buffer;
  public: Buffer;
}

interface Waiting {
  count: number;
  resolve(pairs: RawKeyPair[]): void;
  reject(err: Error): void;
}

/**
 * Makes X25519 key pairs in batches on a worker thread of their own (key-pair-worker.ts).
 *
 * Why not libuv's thread pool, one `generateKeyPair` a pair: each pair was a job the event loop
 * created and a callback it ran (with two DER buffers and a promise), and finished jobs come back
 * once a turn, so a loop busy with pairings got few a turn and the pool behind it ran dry. While 300
 * accounts paired (2.5 a second, 812 pre-keys each) the daemon's profile put 22 % of its main
 * thread in `keyPairNow` (the pool's fallback on the event loop) and 7 % in the jobs' own overhead
 * (README.md, "Performance", 2026-12-01). Here a batch of pairs is one message each way.
 *
 * The worker keeps the process alive only while it owes a batch (at most the ~0.2 s of filling a
 * pool of 4,096), never when idle. If it fails or exits, the batches it owed are rejected and the
 * next batch starts a new one.
 */
export class KeyPairThread {
  private worker: Worker | null = null;
  /** Batches asked for, in the order the worker answers them. */
  private readonly waiting: Waiting[] = [];

  /** `count` new key pairs, made off this thread. */
  batch(count: number): Promise<RawKeyPair[]> {
    return new Promise<RawKeyPair[]>((resolve, reject) => {
      const worker = this.worker ?? this.start();
      if (this.waiting.length === 0) worker.ref();
      this.waiting.push({ count, resolve, reject });
      worker.postMessage({ count } satisfies KeyPairRequest);
    });
  }

  /** Ends the worker (tests); batches it owed are rejected. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.fail(worker, new Error('the key-pair thread was closed'));
    await worker.terminate();
  }

  private start(): Worker {
    const worker = spawn();
    worker.on('message', (data: ArrayBuffer) => {
      const job = this.waiting.shift();
      if (!job) return;
      if (this.waiting.length === 0) worker.unref();
      const bytes = Buffer.from(data);
      const pairs: RawKeyPair[] = new Array<RawKeyPair>(job.count);
      for (let i = 0; i < job.count; i++) {
        // Buffer.from copies the 32 bytes into Node's small-buffer slab: the batch's buffer is not kept.
        pairs[i] = { private: Buffer.from(bytes.subarray(i * 64, i * 64 + 32)), public: Buffer.from(bytes.subarray(i * 64 + 32, i * 64 + 64)) };
      }
      bytes.fill(0);
      job.resolve(pairs);
    });
    worker.on('error', (err) => this.fail(worker, err));
    worker.on('exit', (code) => this.fail(worker, new Error(`the key-pair thread exited (${code})`)));
    // After the listeners (attaching a 'message' listener refs the worker again): idle, it holds nothing.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private fail(worker: Worker, err: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    for (const job of this.waiting.splice(0)) job.reject(err);
  }
}

/** Starts the worker thread (key-pair-worker.ts beside this module; domain/worker-thread.ts). */
function spawn(): Worker {
  // No resource limits: with an old generation capped at 32 MiB the thread ran a full collection
  // every 1.3 s while 1,000 phones paired (322 in 430 s, 5.7 s of its CPU; --trace-gc), its own
  // start-up heap being ~17 MiB. What it keeps between batches is a few KiB.
  return startWorker(import.meta.url, 'key-pair-worker');
}
