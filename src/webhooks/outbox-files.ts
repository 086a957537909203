import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileDurable, writeFileAtomic } from '../store/atomic-write.js';
import { storePaths } from '../store/paths.js';
import { isDeliveryId, isDeliveryRecord, type DeliveryRecord } from './delivery-record.js';

/**
 * The on-disk outbox, shared by the daemon and the CLI:
 *
 *   outbox/<instanceId>/<deliveryId>.json   one delivery (event + state), written atomically
 *
 * Only the process holding the data dir lock (the daemon, or a CLI command while none runs) reads
 * and writes them.
 */
export function outboxPaths(dataDir: string) {
  const root = storePaths(dataDir).outboxDir;
  return {
    root,
    instanceDir: (instanceId: string) => join(root, instanceId),
    file: (instanceId: string, deliveryId: string) => join(root, instanceId, `${deliveryId}.json`),
    /** Left by versions whose CLI wrote the outbox itself; removed at start. */
    requestsDir: join(root, '.requeue'),
  };
}

export type OutboxPaths = ReturnType<typeof outboxPaths>;

/** A delivery file, or null when it is missing or not a delivery (hand-edited, foreign). */
export async function readDelivery(file: string): Promise<DeliveryRecord | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const value: unknown = JSON.parse(text);
    return isDeliveryRecord(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Atomic, and fsynced unless `durable` is false: a new delivery must survive a crash before the
 * event is acknowledged; the outcome of an attempt need not (losing it in a crash means one more
 * attempt, which at-least-once delivery allows).
 */
/**
 * Stores a new delivery: created in place and fsynced (no rename needed for a new file; a torn one
 * left by a crash was never acknowledged and reads as absent).
 */
export async function createDelivery(file: string, record: DeliveryRecord): Promise<void> {
  await createFileDurable(file, JSON.stringify(record));
}

export async function writeDelivery(file: string, record: DeliveryRecord, durable = true): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(record), { durable });
}

/** Delivery ids with a file in `dir` (temp files and lock dirs are skipped). */
export async function listDeliveryIds(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  return names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)).filter(isDeliveryId);
}

/** Every readable delivery of an instance, in queue order (seq). */
export async function readInstanceDeliveries(paths: OutboxPaths, instanceId: string, unreadable: string[] = []): Promise<DeliveryRecord[]> {
  const ids = await listDeliveryIds(paths.instanceDir(instanceId));
  const records: DeliveryRecord[] = [];
  for (const id of ids) {
    const r = await readDelivery(paths.file(instanceId, id));
    if (r && r.id === id && r.instanceId === instanceId) records.push(r);
    else unreadable.push(id);
  }
  return records.sort((a, b) => a.seq - b.seq || a.createdAt.localeCompare(b.createdAt));
}

