import type { Low } from 'lowdb';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import { GatewayError, storageError } from '../../domain/errors.js';
import type { InstanceRecord, InstancesDoc, WebhookSettings } from '../../domain/types.js';
import { matches } from '../../schemas/check.js';
import { InstancesDocSchema } from '../../schemas/instance.js';
import { ensureDir } from './atomic-write.js';
import { openLow, type AtomicJsonFile } from './json-file.js';
import { storePaths, type StorePaths } from './paths.js';
import { generateApiKey, generateInstanceId, hashSecret } from '../../domain/secrets.js';

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

function copy(doc: InstancesDoc): InstancesDoc {
  return normalise(structuredClone(doc));
}

export interface CreateInstanceInput {
  name?: string;
  owner?: string;
  sandbox?: boolean;
  webhook?: WebhookSettings | null;
  /** Extra premium days on top of the trial, from `--premium-days`. */
  premiumDays?: number;
}

export interface CreatedInstance {
  record: InstanceRecord;
  apiKey: string;
  trialGranted: boolean;
}

/**
 * Instances and keys, in one lowdb JSON file (instances.json). One process writes it at a time:
 * the daemon while it runs, else the CLI command holding the data dir lock; so the loaded document
 * is the truth and is never re-read. Updates run one at a time on a copy, which replaces the loaded
 * document only once the write is on disk.
 */
export class InstanceStore {
  readonly paths: StorePaths;
  private readonly db: Low<InstancesDoc>;
  private readonly adapter: AtomicJsonFile<InstancesDoc>;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly clock: Clock,
    private readonly trialDays = 30,
  ) {
    this.paths = storePaths(dataDir);
    const { db, adapter } = openLow(this.paths.instances, isInstancesDoc, emptyDoc);
    this.db = db;
    this.adapter = adapter;
  }

  /** Reads the file; a corrupt one throws STORE_CORRUPT and is left untouched. */
  async load(): Promise<InstancesDoc> {
    try {
      this.db.data = normalise((await this.adapter.read()) ?? emptyDoc());
      this.loadError = null;
    } catch (err) {
      // Never write over a file that could not be read: every write fails with the same error.
      this.loadError = err;
      throw err;
    }
    return this.db.data;
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

  /** Read-modify-write on a copy; `fn` may throw to abort without writing. */
  async update<R>(fn: (doc: InstancesDoc) => R | Promise<R>): Promise<R> {
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
      const trialGranted = !Object.hasOwn(doc.owners, owner) && this.trialDays > 0;
      let premiumMs = trialGranted ? this.trialDays * DAY_MS : 0;
      premiumMs += Math.min(input.premiumDays ?? 0, MAX_PREMIUM_DAYS) * DAY_MS;
      const record: InstanceRecord = {
        id,
        name: input.name?.trim() || id,
        owner,
        sandbox: input.sandbox ?? false,
        keyHash: hashSecret(apiKey),
        createdAt: new Date(now).toISOString(),
        premiumUntil: premiumMs > 0 ? new Date(now + premiumMs).toISOString() : null,
        webhook: input.webhook ?? null,
      };
      if (beforeWrite) await beforeWrite(id);
      doc.instances[id] = record;
      if (!Object.hasOwn(doc.owners, owner)) {
        doc.owners[owner] = { trialInstanceId: id, trialGrantedAt: new Date(now).toISOString() };
      }
      return { record, apiKey, trialGranted };
    });
  }

  /** Applies `fn` to one instance; unknown ids are NOT_FOUND. */
  async modify(id: string, fn: (record: InstanceRecord) => void): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = Object.hasOwn(doc.instances, id) && !doc.instances[id]!.deleting ? doc.instances[id] : undefined;
      if (!record) throw new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
      fn(record);
      return record;
    });
  }

  async rotateKey(id: string): Promise<{ record: InstanceRecord; apiKey: string }> {
    const apiKey = generateApiKey();
    const record = await this.modify(id, (r) => {
      r.keyHash = hashSecret(apiKey);
    });
    return { record, apiKey };
  }

  /** Extends premium by `days` from now, or from the current end if it lies in the future. */
  async grantPremium(id: string, days: number): Promise<InstanceRecord> {
    if (!Number.isInteger(days) || days < 1 || days > MAX_PREMIUM_DAYS) {
      throw new GatewayError('INVALID_FIELD', `days: expected a whole number from 1 to ${MAX_PREMIUM_DAYS}`);
    }
    const now = this.clock.now();
    return this.modify(id, (r) => {
      const current = r.premiumUntil ? Date.parse(r.premiumUntil) : 0;
      const until = Math.max(now, current) + days * DAY_MS;
      // Repeated grants could still add up past what a date can hold: cap at 10,000 years.
      r.premiumUntil = new Date(Math.min(until, now + 3_650_000 * DAY_MS)).toISOString();
    });
  }

  async setWebhook(id: string, webhook: WebhookSettings | null): Promise<InstanceRecord> {
    return this.modify(id, (r) => {
      r.webhook = webhook;
    });
  }

  /** Takes an instance out of service: from now on it is unknown to every route. */
  async markDeleting(id: string): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = Object.hasOwn(doc.instances, id) ? doc.instances[id] : undefined;
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
