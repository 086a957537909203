import { statSync } from 'node:fs';
import { DAY_MS, type Clock } from '../domain/clock.js';
import { UserError } from '../domain/errors.js';
import { WEBHOOK_EVENTS, type InstanceRecord, type WebhookSettings } from '../domain/types.js';
import { ensureDir } from './atomic-write.js';
import { openLow, type AtomicJsonFile } from './json-file.js';
import { withFileLock } from './lock.js';
import { storePaths, type StorePaths } from './paths.js';
import { generateApiKey, generateInstanceId, hashSecret } from './secrets.js';
import type { Low } from 'lowdb';
import { isRecord } from '../domain/guards.js';

/** The cold store file: instances, their key hashes and which owners have had their trial. */
export interface InstancesDoc {
  version: 1;
  instances: Record<string, InstanceRecord>;
  /** Owners whose first instance already received the trial. */
  owners: Record<string, { trialInstanceId: string; trialGrantedAt: string }>;
}

export const DEFAULT_OWNER = 'default';


function isWebhook(v: unknown): v is WebhookSettings | null {
  if (v === null) return true;
  if (!isRecord(v) || typeof v.url !== 'string') return false;
  if (!(v.secret === null || typeof v.secret === 'string')) return false;
  return v.events === null || (Array.isArray(v.events) && v.events.every((e) => (WEBHOOK_EVENTS as readonly unknown[]).includes(e)));
}

function isInstance(v: unknown): v is InstanceRecord {
  return (
    isRecord(v) &&
    typeof v.id === 'string' &&
    typeof v.name === 'string' &&
    typeof v.owner === 'string' &&
    typeof v.sandbox === 'boolean' &&
    typeof v.keyHash === 'string' &&
    typeof v.createdAt === 'string' &&
    (v.premiumUntil === null || typeof v.premiumUntil === 'string') &&
    isWebhook(v.webhook)
  );
}

export function isInstancesDoc(v: unknown): v is InstancesDoc {
  return (
    isRecord(v) &&
    v.version === 1 &&
    isRecord(v.instances) &&
    Object.values(v.instances).every(isInstance) &&
    isRecord(v.owners)
  );
}

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
 * Instances and keys, in one lowdb JSON file. Every change is a read-modify-write inside the
 * cross-process lock, reading the file fresh, so concurrent CLI processes and the daemon never
 * lose each other's updates.
 */
export class InstanceStore {
  readonly paths: StorePaths;
  private readonly db: Low<InstancesDoc>;
  private readonly adapter: AtomicJsonFile<InstancesDoc>;
  private fileIdentity = '';
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

  /**
   * Loads and updates of one store run one at a time: a reload that replaced the document while an
   * update was between its read and its write would make that write drop the update.
   */
  private serial<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.queue.then(fn, fn);
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Reads the file (fails on a corrupt one) and remembers which version of it is loaded. */
  async load(): Promise<InstancesDoc> {
    return this.serial(async () => {
      const identity = this.currentIdentity();
      this.db.data = normalise((await this.adapter.read()) ?? emptyDoc());
      this.fileIdentity = identity;
      return this.db.data;
    });
  }

  /** The loaded document (call load() first). */
  get data(): InstancesDoc {
    return this.db.data;
  }

  /** True when the file on disk is not the version we loaded (another process wrote it). */
  changedOnDisk(): boolean {
    return this.currentIdentity() !== this.fileIdentity;
  }

  private currentIdentity(): string {
    try {
      const s = statSync(this.paths.instances);
      return `${s.ino}:${s.size}:${s.mtimeMs}`;
    } catch {
      return 'missing';
    }
  }

  /**
   * Locked read-modify-write of a fresh copy of the file; the loaded document is replaced only once
   * the write is done. `fn` may throw to abort without writing.
   */
  async update<R>(fn: (doc: InstancesDoc) => R | Promise<R>): Promise<R> {
    await ensureDir(this.paths.dataDir);
    return this.serial(() =>
      withFileLock(this.paths.instances, async () => {
        const doc = normalise((await this.adapter.read()) ?? emptyDoc());
        const result = await fn(doc);
        await this.adapter.write(doc);
        this.db.data = doc;
        this.fileIdentity = this.currentIdentity();
        return result;
      }),
    );
  }

  get(id: string): InstanceRecord | undefined {
    return Object.hasOwn(this.db.data.instances, id) ? this.db.data.instances[id] : undefined;
  }

  list(): InstanceRecord[] {
    return Object.values(this.db.data.instances);
  }

  /**
   * Creates an instance, granting the owner's trial if this is their first. `beforeWrite` runs
   * inside the lock before the record is written (the hot credit file goes first, so a crash
   * never leaves an instance without the credits it was created with).
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
      premiumMs += (input.premiumDays ?? 0) * DAY_MS;
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

  /** Applies `fn` to one instance inside the lock; unknown ids are a UserError. */
  async modify(id: string, fn: (record: InstanceRecord) => void): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = Object.hasOwn(doc.instances, id) ? doc.instances[id] : undefined;
      if (!record) throw new UserError(`no instance with id ${JSON.stringify(id)}`, 4);
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
    const now = this.clock.now();
    return this.modify(id, (r) => {
      const current = r.premiumUntil ? Date.parse(r.premiumUntil) : 0;
      r.premiumUntil = new Date(Math.max(now, current) + days * DAY_MS).toISOString();
    });
  }

  async setWebhook(id: string, webhook: WebhookSettings | null): Promise<InstanceRecord> {
    return this.modify(id, (r) => {
      r.webhook = webhook;
    });
  }

  async remove(id: string): Promise<InstanceRecord> {
    return this.update((doc) => {
      const record = Object.hasOwn(doc.instances, id) ? doc.instances[id] : undefined;
      if (!record) throw new UserError(`no instance with id ${JSON.stringify(id)}`, 4);
      delete doc.instances[id];
      return record;
    });
  }
}
