import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InstanceRecord } from '../src/schemas/instance.js';
import { UNGUARDED } from '../src/fs/write-guard.js';
import { writeFileAtomic } from '../src/fs/atomic-write.js';
import type { InstancesDoc } from '../src/schemas/instance.js';
import { generateApiKey, generateInstanceId, hashSecret } from '../src/domain/secrets.js';

/**
 * Writes a store of `count` sandbox instances straight to disk (creating 10,000 through the CLI one
 * by one would take minutes and measure nothing we care about here). Returns the first instance,
 * non-premium with `credits` credits, and its key.
 */
export async function seedStore(dataDir: string, count: number, credits: number, premium = false): Promise<{ id: string; key: string }> {
  const doc: InstancesDoc = { version: 1, instances: {}, owners: { default: { trialInstanceId: 'seed', trialGrantedAt: new Date().toISOString() } } };
  let first: { id: string; key: string } | null = null;
  for (let i = 0; i < count; i++) {
    const key = generateApiKey();
    const id = generateInstanceId();
    const record: InstanceRecord = {
      id,
      name: `bench-${i}`,
      owner: 'default',
      sandbox: true,
      keyHash: hashSecret(key),
      createdAt: new Date().toISOString(),
      premiumUntil: premium && i === 0 ? new Date(Date.now() + 86_400_000).toISOString() : null,
      webhook: null,
    };
    doc.instances[id] = record;
    first ??= { id, key };
  }
  await writeFileAtomic(join(dataDir, 'instances.json'), JSON.stringify(doc), { guard: UNGUARDED });
  await mkdir(join(dataDir, 'credits'), { recursive: true, mode: 0o700 });
  await writeFile(join(dataDir, 'credits', `${first!.id}.json`), JSON.stringify({ balance: credits, spent: 0 }), { mode: 0o600 });
  return first!;
}
