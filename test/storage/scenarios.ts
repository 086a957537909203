/**
 * Workloads the crash children run (crash-child.ts). Each acknowledges (ack) only what the port
 * promised is durable, so the parent can check exactly that after a kill -9.
 */
import type { Storage } from '../../src/storage/storage.js';

export type Scenario = (storage: Storage, args: unknown, ack: (value: unknown) => void) => Promise<void>;

export const SCENARIOS: Record<string, Scenario> = {
  /** Concurrent sends against one instance's credits: ack {sent} after each debit. */
  async debits(storage, args, ack) {
    const { id, sends, concurrency } = args as { id: string; sends: number; concurrency: number };
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < sends) {
        next += 1;
        const hold = await storage.credits.hold(id);
        if (!hold) return;
        const balance = await hold.commit();
        ack({ balance });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  },
};
