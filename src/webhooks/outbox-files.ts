import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createFileDurable, ensureDir, writeFileAtomic } from '../store/atomic-write.js';
import { withFileLock } from '../store/lock.js';
import { storePaths } from '../store/paths.js';
import { isDeliveryId, isDeliveryRecord, type DeliveryRecord } from './delivery-record.js';

/**
 * The on-disk outbox, shared by the daemon and the CLI:
 *
 *   outbox/<instanceId>/<deliveryId>.json   one delivery (event + state), written atomically
 *   outbox/.requeue/<instanceId>.<deliveryId> a CLI redelivery nudge the daemon polls for
 *
 * Pending files are written by the daemon alone. A finished file may be written by the CLI
 * (redeliver) and deleted by the daemon (history pruning); both do that under the file's lock.
 */
export function outboxPaths(dataDir: string) {
  const root = storePaths(dataDir).outboxDir;
  return {
    root,
    instanceDir: (instanceId: string) => join(root, instanceId),
    file: (instanceId: string, deliveryId: string) => join(root, instanceId, `${deliveryId}.json`),
    requestsDir: join(root, '.requeue'),
    request: (instanceId: string, deliveryId: string) => join(root, '.requeue', `${instanceId}.${deliveryId}`),
  };
}

export type OutboxPaths = ReturnType<typeof outboxPaths>;

/** Splits a nudge file name back into its instance and delivery ids; null for anything else. */
export function parseRequestName(name: string): { instanceId: string; deliveryId: string } | null {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  const instanceId = name.slice(0, dot);
  const deliveryId = name.slice(dot + 1);
  return isDeliveryId(deliveryId) && instanceId.startsWith('inst_') ? { instanceId, deliveryId } : null;
}

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

export type RequeueResult =
  | { outcome: 'requeued'; record: DeliveryRecord }
  | { outcome: 'already-pending'; record: DeliveryRecord }
  | { outcome: 'not-found' };

/**
 * Puts a finished delivery back in the queue with the same webhook-id (CLI `redeliver`): under the
 * instance outbox's lock, so the daemon's history pruning cannot delete it halfway; then leaves a nudge so a
 * running daemon picks it up within its poll interval. A daemon that is not running loads it as
 * pending on start.
 */
export async function requeueDelivery(dataDir: string, instanceId: string, deliveryId: string, now: number): Promise<RequeueResult> {
  const paths = outboxPaths(dataDir);
  if (!isDeliveryId(deliveryId)) return { outcome: 'not-found' };
  const file = paths.file(instanceId, deliveryId);
  if (!(await readDelivery(file))) return { outcome: 'not-found' };
  // The instance's outbox lock: the daemon prunes history under the same one.
  const result = await withFileLock(paths.instanceDir(instanceId), async (): Promise<RequeueResult> => {
    const record = await readDelivery(file);
    if (!record || record.instanceId !== instanceId) return { outcome: 'not-found' };
    if (record.status === 'pending') return { outcome: 'already-pending', record };
    const others = await readInstanceDeliveries(paths, instanceId);
    const maxSeq = others.reduce((m, r) => Math.max(m, r.seq), 0);
    const iso = new Date(now).toISOString();
    const requeued: DeliveryRecord = {
      ...record,
      seq: maxSeq + 1,
      status: 'pending',
      attempts: 0,
      lastError: null,
      lastStatus: null,
      nextAttemptAt: iso,
      deliveredAt: null,
      finishedAt: null,
      redeliveries: record.redeliveries + 1,
    };
    await writeDelivery(file, requeued);
    return { outcome: 'requeued', record: requeued };
  });
  if (result.outcome === 'requeued') {
    await ensureDir(paths.requestsDir);
    await writeFileAtomic(paths.request(instanceId, deliveryId), '');
  }
  return result;
}
