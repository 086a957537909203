import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from 'pino';
import {
  BufferJSON,
  initAuthCreds,
  proto,
  type AuthenticationCreds,
  type AuthenticationState,
  type SignalDataSet,
  type SignalDataTypeMap,
  type SignalKeyStore,
} from '@whiskeysockets/baileys';
import { ensureDir, writeFileAtomic } from '../../storage/files/atomic-write.js';
import { errorMessage, GatewayError } from '../../domain/errors.js';
import { isRecord } from '../../domain/guards.js';

/**
 * One instance's Baileys credentials and Signal keys, held in memory and saved as ONE JSON file.
 *
 * One file rather than one per key: every save is a snapshot of creds and keys taken at a single
 * moment, so a crash can never leave creds that point at pre-keys which were not written (the
 * failure mode of per-key files). Sessions and pre-keys are small; the file stays in the low MB.
 */

type KeyType = keyof SignalDataTypeMap;
type KeyTable = Map<string, unknown>;

const FORMAT = 1;
/** How long the JSON of unchanged key tables is kept after a write (see AuthStore.tableJson). */
const TABLE_CACHE_MS = 30_000;

/**
 * Whether a key write changes nothing: the same JSON as what is stored. The very same object is
 * never "the same value": it may have been changed in place before being written back.
 */
function sameValue(stored: unknown, next: unknown): boolean {
  if (stored === undefined) return false;
  if (typeof next !== 'object' || next === null) return stored === next;
  if (stored === next) return false;
  return JSON.stringify(stored, BufferJSON.replacer) === JSON.stringify(next, BufferJSON.replacer);
}

interface AuthFile {
  format: number;
  creds: AuthenticationCreds;
  keys: Record<string, Record<string, unknown>>;
}

/** The credentials file exists but cannot be used; pairing afresh over it would lose the session. */
export class AuthStateCorruptError extends GatewayError {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(
      'STORE_CORRUPT',
      `credentials file ${file} is unreadable (${detail}); refusing to start a new pairing over it. ` +
        'Restore it from a backup, or delete it (or log the instance out) to pair again.',
    );
    this.name = 'AuthStateCorruptError';
  }
}

export interface AuthStoreOptions {
  logger: Logger;
  /** Quiet period before a save; bursts of key updates during a sync coalesce into one write. */
  debounceMs?: number;
}

/** Path of an instance's credentials file under the data dir. */
export function authFilePath(dataDir: string, instanceId: string): string {
  return join(dataDir, 'auth', `${instanceId}.json`);
}


function parseAuthFile(file: string, text: string): AuthFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, BufferJSON.reviver) as unknown;
  } catch (err) {
    throw new AuthStateCorruptError(file, `not valid JSON: ${errorMessage(err)}`);
  }
  if (!isRecord(parsed)) throw new AuthStateCorruptError(file, 'not a JSON object');
  if (parsed.format !== FORMAT) throw new AuthStateCorruptError(file, `unknown format ${String(parsed.format)}`);
  const { creds, keys } = parsed;
  if (!isRecord(creds) || !isRecord(creds.noiseKey) || !isRecord(creds.signedIdentityKey) || typeof creds.advSecretKey !== 'string') {
    throw new AuthStateCorruptError(file, 'creds are incomplete');
  }
  if (!isRecord(keys) || !Object.values(keys).every(isRecord)) throw new AuthStateCorruptError(file, 'keys are malformed');
  return {
    format: FORMAT,
    // Shape checked above for the fields Baileys needs first; the rest is Baileys' own output.
    creds: creds as unknown as AuthenticationCreds,
    keys: keys as Record<string, Record<string, unknown>>,
  };
}

/**
 * Removes temp files left by a writer that died mid-write. Only those of processes that are gone:
 * a live writer's temp file is about to be renamed.
 */
async function sweepTempFiles(file: string, logger: Logger): Promise<void> {
  const dir = dirname(file);
  const prefix = `.${basename(file)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(pid) && pid !== process.pid && processAlive(pid)) continue;
    logger.info({ file: join(dir, name) }, 'removing temp file of an interrupted credentials write');
    await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class AuthStore {
  private creds: AuthenticationCreds;
  private keys = new Map<KeyType, KeyTable>();
  /**
   * Each key table's JSON as last written, until the table changes: a save re-serialises the creds
   * and the tables written since, not the whole store. A login changes the creds and a few keys;
   * re-serialising hundreds of app-state, LID-mapping and tctoken entries for it cost a thousand
   * sessions logging in together most of their CPU (and the garbage collector the rest).
   */
  private tableJson = new Map<KeyType, string>();
  /** Frees tableJson once writes stop coming: it is for bursts (logins, a busy chat), not for idle sessions. */
  private cacheTimer: NodeJS.Timeout | null = null;
  /** The creds JSON of the file on disk (null: no file yet, or removed). */
  private writtenCreds: string | null;
  /** A key table changed since the last write. */
  private tablesChanged = false;
  private writeCount = 0;
  /** Bumped by remove(): key writes from a socket of the removed session must not leak into the next. */
  private epoch = 0;
  private currentState: AuthenticationState;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private readonly debounceMs: number;

  private constructor(
    readonly file: string,
    private readonly logger: Logger,
    loaded: AuthFile | null,
    options: AuthStoreOptions,
  ) {
    this.debounceMs = options.debounceMs ?? 300;
    this.creds = loaded?.creds ?? initAuthCreds();
    this.writtenCreds = loaded ? JSON.stringify(loaded.creds, BufferJSON.replacer) : null;
    if (loaded) this.loadKeys(loaded.keys);
    this.currentState = this.makeState();
  }

  /** Files written so far (a save with nothing new is skipped); for tests. */
  get writes(): number {
    return this.writeCount;
  }

  /**
   * Loads the credentials at `file`, or fresh ones when there is none. Throws
   * AuthStateCorruptError when the file exists but does not parse: that must be a human decision.
   */
  static async open(file: string, options: AuthStoreOptions): Promise<AuthStore> {
    await ensureDir(dirname(file));
    await sweepTempFiles(file, options.logger);
    let text: string | null = null;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new AuthStateCorruptError(file, `cannot read it: ${errorMessage(err)}`);
      }
    }
    const loaded = text === null ? null : parseAuthFile(file, text);
    return new AuthStore(file, options.logger, loaded, options);
  }

  /** Deletes the credentials file of an instance whose store may be unopenable (corrupt). */
  static async removeFile(file: string): Promise<void> {
    await rm(file, { force: true });
  }

  /** The state to hand to makeWASocket; the same object until remove(). */
  get state(): AuthenticationState {
    return this.currentState;
  }

  /** "Paired" means a linked account: QR logins never set `creds.registered`. */
  get paired(): boolean {
    return this.creds.account != null;
  }

  /** Call on `creds.update`: Baileys has already merged the update into `state.creds`. */
  saveCreds(): void {
    this.markDirty();
  }

  /** Writes anything pending now; for shutdown and tests. Safe to call repeatedly. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    // Loop: a write in flight may have started before the latest change.
    while (this.writing || this.dirty) {
      if (this.writing) await this.writing.catch(() => undefined);
      else await this.writeNow();
    }
  }

  /** Forgets the session: deletes the file and starts over with fresh, unpaired credentials. */
  async remove(): Promise<void> {
    this.epoch += 1;
    this.dirty = false;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.writing) await this.writing.catch(() => undefined);
    await rm(this.file, { force: true });
    this.creds = initAuthCreds();
    this.keys = new Map();
    this.tableJson = new Map();
    this.writtenCreds = null;
    this.tablesChanged = true;
    this.currentState = this.makeState();
  }

  private makeState(): AuthenticationState {
    const epoch = this.epoch;
    const keys: SignalKeyStore = {
      get: <T extends KeyType>(type: T, ids: string[]) => {
        const table = this.keys.get(type);
        const out: { [id: string]: SignalDataTypeMap[T] } = {};
        if (epoch !== this.epoch || !table) return out;
        for (const id of ids) {
          const value = table.get(id);
          // Values in a table only ever come from set() or loadKeys() for this very type.
          if (value !== undefined) out[id] = value as SignalDataTypeMap[T];
        }
        return out;
      },
      set: (data: SignalDataSet) => {
        if (epoch !== this.epoch) {
          this.logger.debug('dropping a key write from a removed session');
          return;
        }
        let changed = false;
        for (const [type, entries] of Object.entries(data) as [KeyType, Record<string, unknown> | undefined][]) {
          if (!entries) continue;
          let table = this.keys.get(type);
          if (!table) {
            table = new Map();
            this.keys.set(type, table);
          }
          let tableChanged = false;
          for (const [id, value] of Object.entries(entries)) {
            if (value === null || value === undefined) {
              tableChanged = table.delete(id) || tableChanged;
            } else if (!sameValue(table.get(id), value)) {
              table.set(id, value);
              tableChanged = true;
            }
          }
          if (tableChanged) {
            this.tableJson.delete(type);
            changed = true;
          }
        }
        // Baileys writes the same values again at every login (its own device list, …): nothing to save.
        if (!changed) return;
        this.tablesChanged = true;
        this.markDirty();
      },
      clear: () => {
        if (epoch !== this.epoch) return;
        this.keys = new Map();
        this.tableJson = new Map();
        this.tablesChanged = true;
        this.markDirty();
      },
    };
    return { creds: this.creds, keys };
  }

  private loadKeys(stored: Record<string, Record<string, unknown>>): void {
    for (const [type, entries] of Object.entries(stored)) {
      const table: KeyTable = new Map();
      for (const [id, value] of Object.entries(entries)) {
        if (value === null || value === undefined) continue;
        // JSON loses the protobuf class; Baileys calls methods that only the class has.
        table.set(id, type === 'app-state-sync-key' && isRecord(value) ? proto.Message.AppStateSyncKeyData.fromObject(value) : value);
      }
      this.keys.set(type as KeyType, table);
    }
  }

  /**
   * The file: `{"format":1,"creds":…,"keys":{"<type>":{…},…}}`, the same text JSON.stringify of the
   * whole document with BufferJSON.replacer gives, built from the cached JSON of unchanged tables.
   * Values are replaced, never changed in place, by Baileys (every change goes through set()).
   */
  private serialise(creds: string): string {
    const tables: string[] = [];
    for (const [type, table] of this.keys) {
      if (table.size === 0) continue;
      let json = this.tableJson.get(type);
      if (json === undefined) {
        json = JSON.stringify(Object.fromEntries(table), BufferJSON.replacer);
        this.tableJson.set(type, json);
      }
      tables.push(`${JSON.stringify(type)}:${json}`);
    }
    return `{"format":${FORMAT},"creds":${creds},"keys":{${tables.join(',')}}}`;
  }

  private expireTableCache(): void {
    if (this.cacheTimer) clearTimeout(this.cacheTimer);
    this.cacheTimer = setTimeout(() => {
      this.cacheTimer = null;
      this.tableJson.clear();
    }, TABLE_CACHE_MS);
    this.cacheTimer.unref();
  }

  private markDirty(): void {
    this.dirty = true;
    this.schedule(this.debounceMs);
  }

  private schedule(delayMs: number): void {
    // A write in flight reschedules itself when it finishes; a pending timer already covers us.
    // Not a sliding debounce: a steady stream of key updates must not postpone saving forever.
    if (this.timer || this.writing) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.writeNow();
    }, delayMs);
    this.timer.unref();
  }

  private writeNow(): Promise<void> {
    if (this.writing) return this.writing;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.dirty = false;
    // Snapshot synchronously, so the file is one consistent moment of creds + keys.
    const creds = JSON.stringify(this.creds, BufferJSON.replacer);
    // Baileys reports creds "updated" at every login with the same values: the file already says that.
    if (!this.tablesChanged && creds === this.writtenCreds) return Promise.resolve();
    const data = this.serialise(creds);
    this.tablesChanged = false;
    const epoch = this.epoch;
    const write = (async () => {
      try {
        if (epoch !== this.epoch) return;
        await writeFileAtomic(this.file, data);
        this.writeCount += 1;
        if (epoch === this.epoch) this.writtenCreds = creds;
        this.expireTableCache();
      } catch (err) {
        this.logger.error({ err, file: this.file }, 'saving credentials failed; will retry');
        if (epoch === this.epoch) {
          this.dirty = true;
          this.tablesChanged = true;
        }
        throw err;
      } finally {
        this.writing = null;
        if (this.dirty) this.schedule(Math.max(this.debounceMs, 1000));
      }
    })();
    this.writing = write;
    write.catch(() => undefined);
    return write;
  }
}
