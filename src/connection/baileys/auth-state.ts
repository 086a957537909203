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
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { pauseIfLong } from '../../domain/time-slice.js';
import { isRecord } from '../../domain/guards.js';
import type { AuthSnapshot, AuthStateRepository, StoredAuth } from '../../storage/ports/auth-state.js';
import { reviveBuffers } from './buffer-json.js';
import { compactViews } from './compact-views.js';
import { jsonText, keyPairText, type KeyText } from './key-text.js';
import { PackedTable } from './packed-table.js';

/**
 * One instance's Baileys credentials and Signal keys, held in memory and saved through the auth
 * state port as one snapshot: creds and keys taken at a single moment, so a crash can never leave
 * creds that point at pre-keys which were not written (the failure mode of per-key writes).
 */

type KeyType = keyof SignalDataTypeMap;
/** What AuthStore uses of a key table: a Map, or a PackedTable for the pre-keys. */
interface KeyTable extends Iterable<[string, unknown]> {
  readonly size: number;
  get(id: string): unknown;
  set(id: string, value: unknown): unknown;
  delete(id: string): boolean;
}

/** A new table for `type`: the pre-keys' packed one (packed-table.ts), else a Map. */
function newTable(type: KeyType): KeyTable {
  return COLD.get(type) === keyPairText ? new PackedTable() : new Map<string, unknown>();
}

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

/**
 * A key table as one JSON object, entry by entry: the same document as
 * `JSON.stringify(Object.fromEntries(table), BufferJSON.replacer)` (entries in the table's order;
 * values are never undefined: set() and loadKeys() skip them), without building that object. The
 * LID-mapping table is keyed by phone numbers, which an object keeps as sparse integer-indexed
 * elements: in the allocation profile of 300 accounts pairing (`BENCH_SESSIONS_ALLOC`), those
 * objects were the largest single source of garbage (1.9 of 13.9 GB; each first sync rewrites
 * the table several times). A realistic account's 604 LID mappings: ~0.64 MB allocated a write
 * that way against ~0.22 MB this way (scavenges over 1,000 writes at a 16 MB young generation),
 * in the same time; its 196 tctokens: 280 against 800 µs.
 */
export function tableToJson(table: Iterable<[string, unknown]>, cold?: KeyText): string {
  // Joined, not appended with +=: appending builds a rope (a V8 cons string per `+=`, over a
  // thousand per table), and the JSON is kept for TABLE_CACHE_MS. In a heap snapshot of 200
  // accounts just paired those ropes were 650,000 of the heap's 2.07 million objects, every one
  // marked at each full collection; join() gives one flat string.
  const parts: string[] = ['{'];
  let entries: Iterable<[string, unknown]> = table;
  if (table instanceof PackedTable) {
    const rows = table.rows();
    if (rows.length > 0) parts.push(`${JSON.stringify(PACKED_ROWS)}:"${rows.toString('base64')}"`);
    entries = table.unpacked();
  }
  for (const [id, value] of entries) parts.push(`${parts.length > 1 ? ',' : ''}${JSON.stringify(id)}:${cold ? cold.json(value as string) : JSON.stringify(value, BufferJSON.replacer)}`);
  parts.push('}');
  return parts.join('');
}

/**
 * The member of a stored pre-key table that holds its key pairs packed: base64 of rows of 68 bytes,
 * each a pre-key's id (32-bit big-endian) and its private and public keys (32 bytes each), in the
 * table's order; entries of any other shape stay beside it as `"<id>": <JSON>`. A pre-key id is
 * a number, so this name is never one. Earlier versions wrote each pair as its JSON,
 * `{"private":{"type":"Buffer","data":…},"public":…}` (~170 bytes an entry against 92), which is
 * still read; the next save writes the packed form.
 *
 * Why: a device that pairs keeps the 812 pre-keys it uploaded until contacts use them, and every
 * login reads them. As JSON that was 139 KB parsed into 2,436 objects and revived into 1,624
 * Buffers a session, then packed again (~1.07 ms of CPU a session); packed, 74 KB and one Buffer
 * (~0.18 ms; `node --import=tsx bench/auth-load.ts`).
 */
export const PACKED_ROWS = '~packed';
/** Standard base64 (what Buffer#toString('base64') writes); Buffer.from skips anything else silently. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Key tables kept as each entry's JSON text, parsed again at each read: Baileys reads them only
 * during an app-state sync or change, and a realistic account's five collection states (LT hash,
 * and a value MAC for each of ~550 index entries) are over a thousand small objects and Buffers
 * that the garbage collector otherwise marks at every full collection, for every session, for as
 * long as it is connected: ~66 KB of heap a session as objects, ~55 KB as text (one object each).
 * Marking that heap was most of the event loop's stall while 1,000 phones paired (issue
 * "Performance, round 2", item 3; README, "Performance").
 *
 * Signal sessions and trusted-contact tokens too: in a heap snapshot of 200 realistic accounts just
 * paired (1.57 million objects), the 39,000 tokens were each an object, a Buffer, its ArrayBuffer
 * and backing store and a timestamp string (~195,000 objects), and the 3,735 Signal session
 * records (libsignal's serialised form: objects keyed by base64 keys, each with a hidden class,
 * descriptor array and enum cache of its own) ~25 objects each. Baileys reads a session once a
 * message it encrypts or decrypts and parses it into a SessionRecord anyway, and a token once a
 * send; a JSON.parse of a few kilobytes is small beside the Signal crypto of that message.
 */
/*
 * One-time pre-keys too, each as its 64 bytes (key-text.ts): a device that pairs makes and uploads
 * 812 (Baileys' INITIAL_PREKEY_COUNT) and keeps them until contacts use them, each read once, when
 * a contact's first message names it. As objects with two Buffers they were 0.2 MB of heap a
 * session once paired.
 */
const COLD: ReadonlyMap<KeyType, KeyText> = new Map<KeyType, KeyText>([
  ['app-state-sync-version', jsonText],
  ['session', jsonText],
  ['tctoken', jsonText],
  ['pre-key', keyPairText],
]);

/** The stored state cannot be used; pairing afresh over it would lose the session. */
export class AuthStateCorruptError extends GatewayError {
  constructor(
    readonly instanceId: string,
    detail: string,
    /** The engine's own message (it names where the state is), used as is. */
    message?: string,
  ) {
    super(
      'STORE_CORRUPT',
      message ??
        `credentials of ${instanceId} are unreadable (${detail}); refusing to start a new pairing over them. ` +
          'Restore them from a backup, or delete them (or log the instance out) to pair again.',
      { publicMessage: 'the stored WhatsApp credentials of this instance are unreadable and were left untouched; log the instance out to pair again' },
    );
    this.name = 'AuthStateCorruptError';
  }
}

export interface AuthStoreOptions {
  logger: Logger;
  /** Quiet period before a save; bursts of key updates during a sync coalesce into one write. */
  debounceMs?: number;
}

/** The creds Baileys needs first must be there; the rest is Baileys' own output. */
function checkStored(instanceId: string, stored: StoredAuth): { creds: AuthenticationCreds; keys: Record<string, Record<string, unknown>> } {
  const { creds, keys } = stored;
  if (!isRecord(creds) || !isRecord(creds.noiseKey) || !isRecord(creds.signedIdentityKey) || typeof creds.advSecretKey !== 'string') {
    throw new AuthStateCorruptError(instanceId, 'creds are incomplete');
  }
  if (!Object.values(keys).every(isRecord)) throw new AuthStateCorruptError(instanceId, 'keys are malformed');
  return { creds: creds as unknown as AuthenticationCreds, keys: keys as Record<string, Record<string, unknown>> };
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
  /** The creds JSON as last stored (null: nothing stored yet, or removed). */
  private writtenCreds: string | null;
  /** Key tables changed since the last write that succeeded. */
  private changedTables = new Set<KeyType>();
  private writeCount = 0;
  /** Bumped by remove(): key writes from a socket of the removed session must not leak into the next. */
  private epoch = 0;
  private currentState: AuthenticationState;
  private dirty = false;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  private readonly debounceMs: number;
  /** Run before each save takes its snapshot (see beforeSave). */
  private readonly beforeSnapshot = new Set<() => void>();

  private constructor(
    private readonly repo: AuthStateRepository,
    readonly instanceId: string,
    private readonly logger: Logger,
    loaded: { creds: AuthenticationCreds; keys: Record<string, Record<string, unknown>> } | null,
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
   * Loads an instance's stored credentials, or fresh ones when there are none. Throws
   * AuthStateCorruptError when they exist but cannot be used: that must be a human decision.
   */
  static async open(repo: AuthStateRepository, instanceId: string, options: AuthStoreOptions): Promise<AuthStore> {
    let stored: StoredAuth | null;
    try {
      stored = await repo.read(instanceId, reviveBuffers);
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'STORE_CORRUPT') throw new AuthStateCorruptError(instanceId, err.message, err.message);
      throw err;
    }
    const loaded = stored === null ? null : checkStored(instanceId, stored);
    return new AuthStore(repo, instanceId, options.logger, loaded, options);
  }

  /** The state to hand to makeWASocket; the same object until remove(). */
  get state(): AuthenticationState {
    return this.currentState;
  }

  /** "Paired" means a linked account: QR logins never set `creds.registered`. */
  get paired(): boolean {
    return this.creds.account != null;
  }

  /**
   * `fn` runs before every save takes its snapshot (a Set: adding the same function again is a
   * no-op). For state derived from Baileys' events that is handed to the keys a moment later (the
   * account book): it must be in the same snapshot as the app-state versions it came with.
   */
  beforeSave(fn: () => void): void {
    this.beforeSnapshot.add(fn);
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
    await this.repo.remove(this.instanceId);
    this.creds = initAuthCreds();
    this.keys = new Map();
    this.tableJson = new Map();
    this.writtenCreds = null;
    this.changedTables = new Set(this.keys.keys());
    this.currentState = this.makeState();
  }

  private makeState(): AuthenticationState {
    const epoch = this.epoch;
    const keys: SignalKeyStore = {
      get: <T extends KeyType>(type: T, ids: string[]) => {
        const cold = COLD.get(type);
        const read = (): { [id: string]: SignalDataTypeMap[T] } => {
          const table = this.keys.get(type);
          const out: { [id: string]: SignalDataTypeMap[T] } = {};
          if (epoch !== this.epoch || !table) return out;
          for (const id of ids) {
            const value = table.get(id);
            // Values in a table only ever come from set() or loadKeys() for this very type: a cold
            // table's are JSON text, a new object at each read (Baileys replaces, never edits, them).
            if (value !== undefined) out[id] = (cold ? cold.decode(value as string) : value) as SignalDataTypeMap[T];
          }
          return out;
        };
        // Every message Baileys decrypts reads keys here first: where a backlog of them (a first
        // history sync, a reconnect's offline messages), all in memory, would otherwise be decrypted
        // in one microtask drain, the event loop gets a turn every SLICE_MS (time-slice.ts).
        const pause = pauseIfLong();
        return pause === null ? read() : pause.then(read);
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
            table = newTable(type);
            this.keys.set(type, table);
          }
          let tableChanged = false;
          const cold = COLD.get(type);
          for (const [id, value] of Object.entries(entries)) {
            if (value === null || value === undefined) {
              tableChanged = table.delete(id) || tableChanged;
            } else if (cold) {
              const text = cold.encode(value);
              if (table.get(id) !== text) {
                table.set(id, text);
                tableChanged = true;
              }
            } else if (!sameValue(table.get(id), value)) {
              table.set(id, compactViews(value));
              tableChanged = true;
            }
          }
          if (tableChanged) {
            this.tableJson.delete(type);
            this.changedTables.add(type);
            changed = true;
          }
        }
        // Baileys writes the same values again at every login (its own device list, …): nothing to save.
        if (!changed) return;
        this.markDirty();
      },
      clear: () => {
        if (epoch !== this.epoch) return;
        for (const type of this.keys.keys()) this.changedTables.add(type);
        this.keys = new Map();
        this.tableJson = new Map();
        this.markDirty();
      },
    };
    return { creds: this.creds, keys };
  }

  private loadKeys(stored: Record<string, Record<string, unknown>>): void {
    for (const [type, entries] of Object.entries(stored)) {
      const table = newTable(type as KeyType);
      if (table instanceof PackedTable && PACKED_ROWS in entries) this.loadRows(type, table, entries[PACKED_ROWS]);
      for (const [id, value] of Object.entries(entries)) {
        if (value === null || value === undefined) continue;
        if (id === PACKED_ROWS && table instanceof PackedTable) continue;
        const cold = COLD.get(type as KeyType);
        if (cold) table.set(id, cold.encode(value));
        // JSON loses the protobuf class; Baileys calls methods that only the class has.
        else table.set(id, type === 'app-state-sync-key' && isRecord(value) ? proto.Message.AppStateSyncKeyData.fromObject(value) : value);
      }
      this.keys.set(type as KeyType, table);
    }
  }

  /** A stored table's packed rows (PACKED_ROWS) into `table`; anything else there is a corrupt state. */
  private loadRows(type: string, table: PackedTable, rows: unknown): void {
    if (typeof rows !== 'string' || !BASE64.test(rows)) throw new AuthStateCorruptError(this.instanceId, `the packed ${type} table is not base64`);
    try {
      table.setRows(Buffer.from(rows, 'base64'));
    } catch (err) {
      throw new AuthStateCorruptError(this.instanceId, `the packed ${type} table is malformed: ${errorMessage(err)}`);
    }
  }

  /**
   * One moment of creds and keys for the port: each table's JSON from the cache while it is
   * unchanged (valid until the engine's first await: tables change after). Values are replaced,
   * never changed in place, by Baileys (every change goes through set()).
   */
  private snapshot(creds: string): AuthSnapshot {
    const tables: Array<{ type: string; changed: boolean; json(): string }> = [];
    for (const [type, table] of this.keys) {
      if (table.size === 0) continue;
      tables.push({
        type,
        changed: this.changedTables.has(type),
        json: () => {
          let json = this.tableJson.get(type);
          if (json === undefined) {
            json = tableToJson(table, COLD.get(type));
            this.tableJson.set(type, json);
          }
          return json;
        },
      });
    }
    return { creds, tables, paired: this.creds.account != null };
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
    // May set keys (and so mark the store dirty: a write in flight then writes again after it).
    for (const fn of this.beforeSnapshot) fn();
    if (this.writing) return this.writing;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.dirty = false;
    // Snapshot synchronously, so the file is one consistent moment of creds + keys.
    const creds = JSON.stringify(this.creds, BufferJSON.replacer);
    // Baileys reports creds "updated" at every login with the same values: the file already says that.
    if (this.changedTables.size === 0 && creds === this.writtenCreds) return Promise.resolve();
    const snapshot = this.snapshot(creds);
    const changed = this.changedTables;
    this.changedTables = new Set();
    const epoch = this.epoch;
    const write = (async () => {
      try {
        if (epoch !== this.epoch) return;
        await this.repo.write(this.instanceId, snapshot);
        this.writeCount += 1;
        if (epoch === this.epoch) this.writtenCreds = creds;
        this.expireTableCache();
      } catch (err) {
        this.logger.error({ err, instanceId: this.instanceId }, 'saving credentials failed; will retry');
        if (epoch === this.epoch) {
          this.dirty = true;
          for (const type of changed) this.changedTables.add(type);
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
