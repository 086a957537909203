import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { errorMessage } from '../domain/errors.js';
import { startWorker } from '../domain/worker-thread.js';
import type { RegexLimits } from './safe-regex.js';
import type { MatchRequest, WorkerReply, WorkerSetup } from './regex-worker.js';

/** How one message fared against a node's regexes; indexes are into the patterns asked about. */
export type MatchOutcome =
  | { kind: 'matched'; index: number }
  | { kind: 'none' }
  /** The budget ran out while pattern `at` was being tried. */
  | { kind: 'budget'; at: number }
  /** No answer (the worker could not start or broke); nothing is known to match. */
  | { kind: 'failed'; reason: string };

export interface RegexMatcherOptions {
  /** Time the worker may spend on one message (wall clock, from when the message is handed to it). */
  budgetMs: number;
  limits: RegexLimits;
  logger: Logger;
  /** How long a starting worker may take to say it is ready. */
  startTimeoutMs?: number;
}

interface Job {
  patterns: readonly string[];
  text: string;
  resolve(outcome: MatchOutcome): void;
}

interface Live {
  worker: Worker;
  progress: Int32Array;
  ready: Promise<void>;
}

/** Idle owners whose last turn is remembered. */
const KEEP_OWNERS = 1_000;

/** Compiled patterns the worker keeps between messages (two flows at their limits). */
const KEEP = { patterns: 1_000, program: 100_000 };

/**
 * Matches flow regexes on a worker thread, one message at a time, so that no pattern can hold the
 * daemon's event loop: what the loop spends on a message is posting it and reading the answer.
 * Each message gets `budgetMs` of the worker; when that runs out the worker is ended (the only way
 * to stop re2js in the middle of a match) and a fresh one started for the next message, and the
 * answer is `budget` with the pattern that was running. Waiting messages are taken from each owner
 * (an instance) in turn: a message waits for at most one message (one budget) of each other owner
 * with messages waiting, however many one hostile owner has queued.
 */
export class RegexMatcher {
  private live: Live | null = null;
  /** Per owner: messages waiting, in arrival order, and when the owner was last served (turn number). */
  private readonly waiting = new Map<string, { jobs: Job[]; served: number }>();
  private pumping = false;
  private stopped = false;
  private seq = 0;
  private turns = 0;

  constructor(private readonly options: RegexMatcherOptions) {}

  /** The first of `patterns` (in order) that matches `text`, tried on the worker within the budget. */
  first(owner: string, patterns: readonly string[], text: string): Promise<MatchOutcome> {
    if (patterns.length === 0) return Promise.resolve({ kind: 'none' });
    if (this.stopped) return Promise.resolve({ kind: 'failed', reason: 'the matcher is stopped' });
    return new Promise((resolve) => {
      const queue = this.waiting.get(owner);
      if (queue) queue.jobs.push({ patterns, text, resolve });
      else this.waiting.set(owner, { jobs: [{ patterns, text, resolve }], served: 0 });
      void this.pump();
    });
  }

  /** Ends the worker; waiting messages get `failed`. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const queue of this.waiting.values()) for (const job of queue.jobs.splice(0)) job.resolve({ kind: 'failed', reason: 'the matcher is stopped' });
    this.waiting.clear();
    const live = this.live;
    this.live = null;
    if (live) await live.worker.terminate();
  }

  /** The oldest message of the owner with messages waiting that was served least recently. */
  private next(): Job | undefined {
    let pick: { jobs: Job[]; served: number } | undefined;
    for (const queue of this.waiting.values()) if (queue.jobs.length > 0 && (pick === undefined || queue.served < pick.served)) pick = queue;
    if (pick === undefined) return undefined;
    pick.served = ++this.turns;
    // Owners are kept while idle so that their turn is remembered; past many, the idle ones go.
    if (this.waiting.size > KEEP_OWNERS) for (const [owner, queue] of this.waiting) if (queue.jobs.length === 0 && queue !== pick) this.waiting.delete(owner);
    return pick.jobs.shift();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let job = this.next(); job !== undefined; job = this.next()) job.resolve(await this.run(job));
    } finally {
      this.pumping = false;
    }
  }

  private async run(job: Job): Promise<MatchOutcome> {
    let live: Live;
    try {
      live = this.worker();
      await live.ready;
    } catch (err) {
      return { kind: 'failed', reason: `the regex worker did not start: ${errorMessage(err)}` };
    }
    if (this.stopped) return { kind: 'failed', reason: 'the matcher is stopped' };
    if (this.live !== live) return { kind: 'failed', reason: 'the regex worker stopped' };
    const id = ++this.seq;
    return new Promise<MatchOutcome>((resolve) => {
      let settled = false;
      const settle = (outcome: MatchOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        live.worker.off('message', onMessage);
        live.worker.off('exit', onExit);
        resolve(outcome);
      };
      const onMessage = (reply: WorkerReply): void => {
        if (!('id' in reply) || reply.id !== id) return;
        if ('error' in reply) settle({ kind: 'failed', reason: reply.error });
        else settle(reply.index >= 0 ? { kind: 'matched', index: reply.index } : { kind: 'none' });
      };
      const onExit = (): void => settle({ kind: 'failed', reason: 'the regex worker stopped' });
      // Real time on purpose: this bounds CPU spent on another thread, not a step of the app's clock.
      const timer = setTimeout(() => {
        const at = Atomics.load(live.progress, 0);
        this.drop(live);
        settle({ kind: 'budget', at });
      }, this.options.budgetMs);
      live.worker.on('message', onMessage);
      live.worker.once('exit', onExit);
      Atomics.store(live.progress, 0, 0);
      const request: MatchRequest = { id, patterns: job.patterns, text: job.text };
      live.worker.postMessage(request);
    });
  }

  /** The running worker, or a new one. */
  private worker(): Live {
    if (this.live) return this.live;
    const progress = new SharedArrayBuffer(4);
    const setup: WorkerSetup = { limits: this.options.limits, progress, keep: KEEP };
    const worker = spawn(setup);
    // The worker must not keep a CLI process alive; a match in flight holds its budget timer.
    worker.unref();
    const live: Live = { worker, progress: new Int32Array(progress), ready: Promise.resolve() };
    live.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`not ready after ${this.options.startTimeoutMs ?? 30_000} ms`));
        this.drop(live);
      }, this.options.startTimeoutMs ?? 30_000);
      worker.on('message', (m: WorkerReply) => {
        if (!('ready' in m)) return;
        clearTimeout(timer);
        resolve();
      });
      worker.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`exited with code ${code}`));
        if (this.live === live) this.live = null;
      });
    });
    // Without a listener a worker's error would be thrown in the daemon; it is followed by 'exit'.
    worker.on('error', (err) => this.options.logger.error({ err: errorMessage(err) }, 'the flow regex worker failed; a new one starts with the next message'));
    live.ready.catch(() => undefined);
    this.live = live;
    return live;
  }

  private drop(live: Live): void {
    if (this.live === live) this.live = null;
    void live.worker.terminate();
  }
}

/** Starts the worker thread (regex-worker.ts beside this module; domain/worker-thread.ts). */
function spawn(setup: WorkerSetup): Worker {
  // Heap for the kept patterns and their DFA caches (at most 64 KiB each, 8 MiB during one match).
  return startWorker(import.meta.url, 'regex-worker', { workerData: setup, resourceLimits: { maxOldGenerationSizeMb: 256 } });
}
