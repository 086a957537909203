import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import Type from 'typebox';
import { matches } from '../../../schemas/check.js';
import { closed } from '../../../schemas/common.js';
import { DELIVERY_ID_PATTERN, applyPatch, isDeliveryId, type DeliveryPatch, type DeliveryRecord } from '../../ports/outbox.js';
import { storePaths } from '../paths.js';
import { DeliveryPatchSchema, isDeliveryRecord } from './schema.js';

/**
 * The on-disk outbox, one folder per instance:
 *
 *   outbox/<instanceId>/outbox.jsonl         the journal: one JSON line per change (see OutboxLine)
 *   outbox/<instanceId>/<deliveryId>.json    one delivery per file, from versions before the
 *                                            journal: moved into the journal at start, then deleted
 *
 * Only the process holding the data dir lock (the daemon, or a CLI command while none runs) writes
 * them.
 */
export function outboxPaths(dataDir: string) {
  const root = storePaths(dataDir).outboxDir;
  return {
    root,
    instanceDir: (instanceId: string) => join(root, instanceId),
    journal: (instanceId: string) => join(root, instanceId, 'outbox.jsonl'),
    /** A delivery file of the layout before the journal. */
    file: (instanceId: string, deliveryId: string) => join(root, instanceId, `${deliveryId}.json`),
    /** Left by versions whose CLI wrote the outbox itself; removed at start. */
    requestsDir: join(root, '.requeue'),
  };
}

export type OutboxPaths = ReturnType<typeof outboxPaths>;

/**
 * One line of the journal:
 * - `{"d": record}`: a delivery as a whole (a new one; or, after a compaction or a migration, one
 *   with its state so far). A later `d` line of the same id replaces the earlier one.
 * - `{"s": state}`: the new state of a delivery (an attempt's outcome, dropped, redelivered).
 * - `{"x": [ids]}`: finished deliveries pruned from the history.
 */
const PruneLineSchema = closed({ x: Type.Array(Type.String({ pattern: DELIVERY_ID_PATTERN.source })) });
const PatchLineSchema = closed({ s: DeliveryPatchSchema });

export type OutboxLine = { d: DeliveryRecord } | { s: DeliveryPatch } | { x: string[] };

export function fullLine(record: DeliveryRecord): string {
  return JSON.stringify({ d: record });
}

export function patchLine(patch: DeliveryPatch): string {
  return JSON.stringify({ s: patch });
}

export function pruneLine(ids: string[]): string {
  return JSON.stringify({ x: ids });
}

/** A journal line, or null when it is not one (a hand-edited or foreign line is skipped). */
export function parseLine(text: string): OutboxLine | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  if ('d' in value) return isDeliveryRecord(value.d) && Object.keys(value).length === 1 ? (value as { d: DeliveryRecord }) : null;
  if ('s' in value) return matches(PatchLineSchema, value) ? value : null;
  return matches(PruneLineSchema, value) ? value : null;
}

/** Deliveries described by journal lines, by id (later lines win; see OutboxLine). */
export function replayLines(texts: Iterable<string>, instanceId: string): Map<string, DeliveryRecord> {
  const records = new Map<string, DeliveryRecord>();
  for (const text of texts) {
    const line = parseLine(text);
    if (!line) continue;
    if ('d' in line) {
      if (line.d.instanceId === instanceId) records.set(line.d.id, line.d);
    } else if ('s' in line) {
      const r = records.get(line.s.id);
      if (r) applyPatch(r, line.s);
    } else {
      for (const id of line.x) records.delete(id);
    }
  }
  return records;
}

/** The complete lines of a journal's text (a torn last line, still being written or cut by a crash, is left out). */
export function completeLines(text: string): string[] {
  const end = text.lastIndexOf('\n');
  return end < 0 ? [] : text.slice(0, end).split('\n').filter((l) => l.length > 0);
}

/** A delivery file of the old layout, or null when it is missing or not a delivery (torn, foreign). */
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

/** Delivery ids with a file of the old layout in `dir` (temp files and lock dirs are skipped). */
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

/**
 * The delivery files of the old layout in an instance's folder: the readable ones, and the ids of
 * those that are not (torn by a crash while being created: never acknowledged).
 */
export async function readLegacyDeliveries(paths: OutboxPaths, instanceId: string): Promise<{ records: DeliveryRecord[]; unreadable: string[] }> {
  const records: DeliveryRecord[] = [];
  const unreadable: string[] = [];
  for (const id of await listDeliveryIds(paths.instanceDir(instanceId))) {
    const r = await readDelivery(paths.file(instanceId, id));
    if (r && r.id === id && r.instanceId === instanceId) records.push(r);
    else unreadable.push(id);
  }
  return { records, unreadable };
}

const byQueueOrder = (a: DeliveryRecord, b: DeliveryRecord): number => a.seq - b.seq || a.createdAt.localeCompare(b.createdAt);

/**
 * Every delivery of an instance as stored, in queue order (seq): the journal's, plus files of the
 * old layout not migrated yet. Reads what is on disk now, so it may run while the daemon writes
 * (tests, support); the daemon itself keeps this in memory.
 */
export async function readInstanceDeliveries(paths: OutboxPaths, instanceId: string): Promise<DeliveryRecord[]> {
  let text = '';
  try {
    text = await readFile(paths.journal(instanceId), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const records = replayLines(completeLines(text), instanceId);
  for (const r of (await readLegacyDeliveries(paths, instanceId)).records) if (!records.has(r.id)) records.set(r.id, r);
  return [...records.values()].sort(byQueueOrder);
}

/** Old enough that no live process is still using it. */
const LEFTOVER_AGE_MS = 60_000;

/**
 * Removes what a process killed mid-write leaves in an instance's folder: temp files of atomic
 * writes (a journal compaction's), lock directories of older versions, and the torn one-file
 * deliveries of the old layout that a load found unreadable (created in place; a torn one was
 * never acknowledged). Only old ones, as before the journal, when the CLI could be writing right now.
 */
export async function removeLeftovers(dir: string, now: number, tornIds: string[]): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const torn = new Set(tornIds.map((id) => `${id}.json`));
  for (const name of names) {
    const isTemp = name.startsWith('.') && name.endsWith('.tmp');
    if (!isTemp && !torn.has(name) && !name.endsWith('.json.lock')) continue;
    const file = join(dir, name);
    const info = await stat(file).catch(() => null);
    if (info && now - info.mtimeMs > LEFTOVER_AGE_MS) await rm(file, { recursive: true, force: true });
  }
}
