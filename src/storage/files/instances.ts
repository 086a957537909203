import type { Low } from 'lowdb';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import { GatewayError, storageError } from '../../domain/errors.js';
import type { InstanceRecord, InstancesDoc } from '../../schemas/instance.js';
import { matches } from '../../schemas/check.js';
import { InstancesDocSchema } from '../../schemas/instance.js';
import { ensureDir, type WriteGuard } from '../../fs/atomic-write.js';
import { openLow, type AtomicJsonFile } from './json-file.js';
import { storePaths, type StorePaths } from './paths.js';
import { generateApiKey, generateInstanceId, hashSecret } from '../../domain/secrets.js';
import type { CreateInstanceInput, CreatedInstance, InstanceRepository } from '../ports/instances.js';

export const DEFAULT_OWNER = 'default';

/** Longest premium grant in one go (about 100 years): dates stay far inside what Date can hold. */
import { MAX_PREMIUM_DAYS } from '../../domain/limits.js';

const isInstancesDoc = (v: unknown): v is InstancesDoc => matches(InstancesDocSchema, v);

/** lowdb hands back plain objects; re-home the maps in null-prototype objects. */
function normalise(doc: InstancesDoc): InstancesDoc {
  doc.instances = Object.assign(Object.create(null), doc.instances);
  doc.owners = Object.assign(Object.create(null), doc.owners);
  return doc;
}

function emptyDoc(): InstancesDoc {
  // Null-prototype maps: ids such as "__proto__" are then ordinary (and absent) keys.
  return { version: 1, instances: Object.create(null), owners: Object.create(null) };
}

/**
 * The copy an update works on: new maps holding the same records. A record is cloned (`own`) before
 * an update changes it, so the loaded document is never changed by an update that fails. A deep copy
 * of the whole document (structuredClone) was O(instances) per update: 28 ms of the main thread for
 * every create at 5,000 instances (2.3 ms at 1,000; /tmp micro benchmark on the 2-core machine),
 * 3 % of the event-loop stalls while a bench paired 1,000 phones.
 */
function copy(doc: InstancesDoc): InstancesDoc {
  return { ...doc, instances: Object.assign(Object.create(null), doc.instances), owners: Object.assign(Object.create(null), doc.owners) };
}

/** The record `id` of an update's copy, cloned so the update may change it; undefined when absent. */
function own(doc: InstancesDoc, id: string): InstanceRecord | undefined {
  if (!Object.hasOwn(doc.instances, id)) return undefined;
  const record = structuredClone(doc.instances[id]!);
  doc.instances[id] = record;
  return record;
}

export type { CreateInstanceInput, CreatedInstance };

/**
 * Instances and keys, in one lowdb JSON file (instances.json). One process writes it at a time:
 * the daemon while it runs, else the CLI command holding the data dir lock; so the loaded document
 * is the truth and is never re-read. Updates run one at a time on a copy, which replaces the loaded
 * document only once the write is on disk.
 */
export class InstanceStore implements InstanceRepository {
  readonly paths: StorePaths;
  private readonly db: Low<InstancesDoc>;
  private readonly adapter: AtomicJsonFile<InstancesDoc>;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly clock: Clock,
    private readonly trialDays: number,
    guard: WriteGuard,
  ) {
    this.paths = storePaths(dataDir);
    const { db, adapter } = openLow(this.paths.instances, isInstancesDoc, emptyDoc, guard);
    this.db = db;
    this.adapter = adapter;
  }

  /** Reads the file; a corrupt one throws STORE_CORRUPT and is left untouched. */
  async load(): Promise<void> {
    try {
      this.db.data = normalise((await this.adapter.read()) ?? emptyDoc());
      this.loadError = null;
    } catch (err) {
      // Never write over a file that could not be read: every write fails with the same error.
      this.loadError = err;
      throw err;
    }
  }

  /** Why the last load failed (a write would replace a file nobody read). */
  private loadError: unknown = null;

  get data(): InstancesDoc {
    return this.db.data;
  }

  private serial<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.queue.then(fn, fn);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * Read-modify-write on a copy (see `copy`: a record is changed only once `own` cloned it); `fn`
   * may throw to abort without writing.
   */
  private async update<R>(fn: (doc: InstancesDoc) => R | Promise<R>): Promise<R> {
    return this.serial(async () => {
      if (this.loadError !== null) throw this.loadError;
      const doc = copy(this.db.data);
      const result = await fn(doc);
      try {
        await ensureDir(this.paths.dataDir);
        await this.adapter.write(doc);
      } catch (err) {
        throw storageError(err, 'instances.json');
      }
      this.db.data = doc;
      return result;
    });
  }

  /** An instance in service (one being deleted is not). */
  get(id: string): InstanceRecord | undefined {
    const record = this.getAny(id);
    return record?.deleting ? undefined : record;
  }

  /** Also an instance whose deletion was interrupted. */
  getAny(id: string): InstanceRecord | undefined {
    return Object.hasOwn(this.db.data.instances, id) ? this.db.data.instances[id] : undefined;
  }

  /** Every instance in service, oldest first (ties by id). */
  list(): InstanceRecord[] {
    return Object.values(this.db.data.instances)
      .filter((r) => !r.deleting)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  /** Instances whose deletion was interrupted (a crash, a full disk): start-up finishes them. */
  deleting(): InstanceRecord[] {
    return Object.values(this.db.data.instances).filter((r) => r.deleting);
  }

  get size(): number {
    return this.list().length;
  }

  /** The record or NOT_FOUND. */
  require(id: string): InstanceRecord {
    const record = this.get(id);
    if (!record) throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
    return record;
  }

  /**
   * Creates an instance, granting the owner's trial if this is their first. `beforeWrite` runs
   * before the record is written (the credit file goes first, so a crash never leaves an instance
   * without the credits it was created with).
   */
  async create(input: CreateInstanceInput, beforeWrite?: (id: string) => Promise<void>): Promise<CreatedInstance> {
    const apiKey = generateApiKey();
    const now = this.clock.now();
    const owner = input.owner?.trim() || DEFAULT_OWNER;
    return this.update(async (doc) => {
      let id = generateInstanceId();
      while (Object.hasOwn(doc.instances, id)) id = generateInstanceId();
      // A sandbox never takes the owner's one-time trial (contract part 3): it starts with what it
      // was created with, and the owner's first real instance still gets the trial.
      const sandbox = input.sandbox ?? false;
      const trialGranted = !sandbox && !Object.hasOwn(doc.owners, owner) && this.trialDays > 0;
      let premiumMs = trialGranted ? this.trialDays * DAY_MS : 0;
      premiumMs += Math.min(input.premiumDays ?? 0, MAX_PREMIUM_DAYS) * DAY_MS;
      const record: InstanceRecord = {
        id,
        name: input.name?.trim() || id,
        owner,
        sandbox,
        keyHash: hashSecret(apiKey),
        createdAt: new Date(now).toISOString(),
        premiumUntil: premiumMs > 0 ? new Date(now + premiumMs).toISOString() : null,
        webhook: input.webhook ?? null,
      };
      if (beforeWrite) await beforeWrite(id);
      doc.instances[id] = record;
      if (trialGranted) doc.owners[owner] = { trialInstanceId: id, trialGrantedAt: new Date(now).toISOString() };
      return { record, apiKey, trialGranted };
    });
  }

  /** Applies `fn` to one instance; unknown ids are NOT_FOUND. */
  async modify(id: string, fn: (record: InstanceRecord) => void): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = Object.hasOwn(doc.instances, id) && !doc.instances[id]!.deleting ? own(doc, id) : undefined;
      if (!record) throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
      fn(record);
      return record;
    });
  }

  /** This process is the only writer of instances.json: nobody else changes it under us. */
  onChange(_listener: (id: string) => void): () => void {
    return () => undefined;
  }

  /** Takes an instance out of service: from now on it is unknown to every route. */
  async markDeleting(id: string): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = own(doc, id);
      if (!record) throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
      record.deleting = true;
      return record;
    });
  }

  async remove(id: string): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = Object.hasOwn(doc.instances, id) ? doc.instances[id] : undefined;
      if (!record) throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
      delete doc.instances[id];
      return record;
    });
  }
}
