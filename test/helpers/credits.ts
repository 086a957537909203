import { CreditStore } from '../../src/storage/files/credits.js';
import { UNGUARDED } from '../../src/fs/write-guard.js';

/** An instance's credits as stored on disk (whatever the file format), read without a daemon. */
export async function readCredits(dataDir: string, instanceId: string): Promise<{ balance: number; spent: number }> {
  const doc = await new CreditStore(dataDir, UNGUARDED).read(instanceId);
  return { balance: doc.balance, spent: doc.spent };
}
