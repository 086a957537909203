import { createCipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { proto } from '@whiskeysockets/baileys';

/**
 * WhatsApp's app state ("syncd") as the server and the phone produce it: mutations encrypted with
 * an app-state sync key, the LT hash that sums them, snapshot and patch MACs. Written from the
 * protocol with node:crypto, not with Baileys' helpers (which run WhatsApp's own Rust code as
 * WebAssembly), so Baileys' checks are checked against an independent implementation: a wrong MAC
 * here makes Baileys log "LTHash verification failed" or skip a record, which the tests look for.
 *
 * - Mutation keys: HKDF-SHA256(keyData, no salt, "WhatsApp Mutation Keys", 160) = index key,
 *   value encryption key, value MAC key, snapshot MAC key, patch MAC key (32 bytes each).
 * - A record: index MAC = HMAC-SHA256(indexKey, JSON index); value = IV || AES-256-CBC(SyncActionData)
 *   followed by the value MAC = HMAC-SHA512(valueMacKey, op || keyId || value || 8-byte length of
 *   op||keyId)[0..32], op 0x01 SET, 0x02 REMOVE.
 * - LT hash ("WhatsApp Patch Integrity"): 128 bytes read as 64 little-endian uint16; each value
 *   MAC is expanded with HKDF-SHA256 to 128 bytes and added (or, when overwritten or removed,
 *   subtracted) point-wise mod 2^16.
 * - Snapshot MAC = HMAC-SHA256(snapshotMacKey, ltHash || uint64 version || name); patch MAC =
 *   HMAC-SHA256(patchMacKey, snapshotMac || value MACs… || uint64 version || name).
 */

export const COLLECTIONS = ['critical_block', 'critical_unblock_low', 'regular_high', 'regular', 'regular_low'] as const;
export type CollectionName = (typeof COLLECTIONS)[number];

export interface MutationKeys {
  indexKey: Buffer;
  valueEncryptionKey: Buffer;
  valueMacKey: Buffer;
  snapshotMacKey: Buffer;
  patchMacKey: Buffer;
}

export function mutationKeys(keyData: Uint8Array): MutationKeys {
  const x = Buffer.from(hkdfSync('sha256', keyData, Buffer.alloc(0), 'WhatsApp Mutation Keys', 160));
  return {
    indexKey: x.subarray(0, 32),
    valueEncryptionKey: x.subarray(32, 64),
    valueMacKey: x.subarray(64, 96),
    snapshotMacKey: x.subarray(96, 128),
    patchMacKey: x.subarray(128, 160),
  };
}

const LT_HASH_INFO = 'WhatsApp Patch Integrity';

/** The LT hash of a collection: a 128-byte sum of every live record's value MAC. */
export function ltHashMix(hash: Buffer, add: Uint8Array[], subtract: Uint8Array[]): Buffer {
  const out = Buffer.from(hash);
  const apply = (mac: Uint8Array, sign: 1 | -1) => {
    const x = Buffer.from(hkdfSync('sha256', mac, Buffer.alloc(0), LT_HASH_INFO, 128));
    for (let i = 0; i < 128; i += 2) out.writeUInt16LE((out.readUInt16LE(i) + sign * x.readUInt16LE(i) + 0x10000) & 0xffff, i);
  };
  for (const m of subtract) apply(m, -1);
  for (const m of add) apply(m, 1);
  return out;
}

const uint64 = (n: number): Buffer => {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(Math.floor(n / 2 ** 32), 0);
  b.writeUInt32BE(n >>> 0, 4);
  return b;
};

export function snapshotMac(ltHash: Buffer, version: number, name: string, keys: MutationKeys): Buffer {
  return createHmac('sha256', keys.snapshotMacKey).update(Buffer.concat([ltHash, uint64(version), Buffer.from(name)])).digest();
}

export function patchMac(snapshot: Buffer, valueMacs: Buffer[], version: number, name: string, keys: MutationKeys): Buffer {
  return createHmac('sha256', keys.patchMacKey).update(Buffer.concat([snapshot, ...valueMacs, uint64(version), Buffer.from(name)])).digest();
}

/** One app-state change: `index` is WhatsApp's JSON index (e.g. `["contact", jid]`). */
export interface Mutation {
  index: string[];
  value: proto.ISyncActionValue;
  /** SyncActionData.version (the action's API version). */
  version: number;
  operation?: 'set' | 'remove';
}

export interface EncodedRecord {
  operation: proto.SyncdMutation.SyncdOperation;
  record: proto.ISyncdRecord;
  indexMac: Buffer;
  valueMac: Buffer;
}

/** The key an account's phone shares with its linked devices (appStateSyncKeyShare). */
export interface AppStateKey {
  keyId: Buffer;
  keyData: Buffer;
  timestamp: number;
}

export function newAppStateKey(): AppStateKey {
  return { keyId: randomBytes(6), keyData: randomBytes(32), timestamp: Date.now() };
}

export function encodeMutation(m: Mutation, key: AppStateKey, keys: MutationKeys): EncodedRecord {
  const operation = m.operation === 'remove' ? proto.SyncdMutation.SyncdOperation.REMOVE : proto.SyncdMutation.SyncdOperation.SET;
  const index = Buffer.from(JSON.stringify(m.index));
  const data = proto.SyncActionData.encode({ index, value: m.value, padding: Buffer.alloc(0), version: m.version }).finish();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', keys.valueEncryptionKey, iv);
  const enc = Buffer.concat([iv, cipher.update(data), cipher.final()]);
  const opAndKey = Buffer.concat([Buffer.from([operation === proto.SyncdMutation.SyncdOperation.SET ? 0x01 : 0x02]), key.keyId]);
  const length = Buffer.alloc(8);
  length[7] = opAndKey.length;
  const valueMac = createHmac('sha512', keys.valueMacKey).update(Buffer.concat([opAndKey, enc, length])).digest().subarray(0, 32);
  const indexMac = createHmac('sha256', keys.indexKey).update(index).digest();
  return {
    operation,
    indexMac,
    valueMac,
    record: { index: { blob: indexMac }, value: { blob: Buffer.concat([enc, valueMac]) }, keyId: { id: key.keyId } },
  };
}

/** A collection as the server keeps it: a snapshot at some version, then patches one version each. */
export interface CollectionState {
  name: CollectionName;
  /** Version of the snapshot (0 = no snapshot: patches from version 1). */
  snapshotVersion: number;
  /** proto.SyncdSnapshot bytes, served as an external blob. */
  snapshot: Buffer | null;
  /** proto.SyncdPatch bytes by version (snapshotVersion + 1 … version). */
  patches: Array<{ version: number; bytes: Buffer }>;
  /** The latest version and its LT hash (what a client that applied everything holds). */
  version: number;
  hash: Buffer;
  /** Live records (index MAC base64 -> value MAC), as a client's indexValueMap. */
  live: Map<string, Buffer>;
  /** Mutations applied, in order (the snapshot's, then each patch's). */
  mutations: number;
}

/**
 * Builds a collection: `snapshot` mutations in one snapshot at `snapshotVersion`, then each entry
 * of `patches` as one patch (one version each). An index set twice overwrites (its old value MAC
 * leaves the LT hash); a `remove` takes it out.
 */
export function buildCollection(name: CollectionName, key: AppStateKey, snapshot: Mutation[], snapshotVersion: number, patches: Mutation[][]): CollectionState {
  const keys = mutationKeys(key.keyData);
  const live = new Map<string, Buffer>();
  let hash: Buffer = Buffer.alloc(128);
  const apply = (records: EncodedRecord[]) => {
    const add: Buffer[] = [];
    const sub: Buffer[] = [];
    for (const r of records) {
      const id = r.indexMac.toString('base64');
      const prev = live.get(id);
      if (prev) sub.push(prev);
      if (r.operation === proto.SyncdMutation.SyncdOperation.REMOVE) live.delete(id);
      else {
        live.set(id, r.valueMac);
        add.push(r.valueMac);
      }
    }
    hash = ltHashMix(hash, add, sub);
  };
  let version = 0;
  let snapshotBytes: Buffer | null = null;
  if (snapshotVersion > 0) {
    const records = snapshot.map((m) => encodeMutation(m, key, keys));
    apply(records);
    version = snapshotVersion;
    snapshotBytes = Buffer.from(
      proto.SyncdSnapshot.encode({ version: { version }, records: records.map((r) => r.record), mac: snapshotMac(hash, version, name, keys), keyId: { id: key.keyId } }).finish(),
    );
  } else if (snapshot.length > 0) {
    throw new Error('buildCollection: snapshot mutations need a snapshot version');
  }
  const out: CollectionState['patches'] = [];
  for (const mutations of patches) {
    version += 1;
    const records = mutations.map((m) => encodeMutation(m, key, keys));
    apply(records);
    const sMac = snapshotMac(hash, version, name, keys);
    const bytes = proto.SyncdPatch.encode({
      version: { version },
      mutations: records.map((r) => ({ operation: r.operation, record: r.record })),
      snapshotMac: sMac,
      patchMac: patchMac(sMac, records.map((r) => r.valueMac), version, name, keys),
      keyId: { id: key.keyId },
    }).finish();
    out.push({ version, bytes: Buffer.from(bytes) });
  }
  return { name, snapshotVersion, snapshot: snapshotBytes, patches: out, version, hash, live, mutations: snapshot.length + patches.reduce((n, p) => n + p.length, 0) };
}
