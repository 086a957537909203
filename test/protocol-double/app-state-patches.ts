import { createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import { proto } from '@whiskeysockets/baileys';
import { encodeMutation, ltHashMix, mutationKeys, patchMac, snapshotMac, type AppStateKey, type CollectionState, type Mutation } from './app-state.js';

/**
 * App-state changes after the first sync, both ways, with the same independent crypto as
 * app-state.ts:
 * - a linked device's patch (`<iq xmlns="w:sync:app:state" type="set">`, what Baileys' chatModify
 *   sends for archive, pin, mute, labels, ...): every MAC is checked (value MACs, index MACs, the
 *   snapshot MAC of the new LT hash, the patch MAC), the values are decrypted, and the collection
 *   moves to the new version, so the phone and other devices get the change;
 * - a change made on the phone: a new patch on the collection, announced to the devices with
 *   `<notification type="server_sync">`, after which Baileys fetches it (and checks it).
 */

/** One mutation of a patch, decrypted. */
export interface DecodedMutation {
  operation: 'set' | 'remove';
  index: string[];
  value: proto.ISyncActionValue;
  version: number;
}

const equal = (a: Uint8Array | null | undefined, b: Uint8Array): boolean => !!a && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * Checks and applies a patch a linked device sent for `state` (the collection `name`), made on top
 * of `baseVersion` (the `<collection version>` of the iq: a device's patch carries no version of its
 * own; it is the next one). Throws, changing nothing, when the device was behind, the key is
 * another, or any MAC does not check out.
 */
export function acceptDevicePatch(state: CollectionState, key: AppStateKey, bytes: Uint8Array, baseVersion: number): DecodedMutation[] {
  const patch = proto.SyncdPatch.decode(bytes);
  const name = state.name;
  if (baseVersion !== state.version) throw new Error(`${name}: a patch on top of version ${baseVersion}, but the collection is at ${state.version}`);
  const version = baseVersion + 1;
  if (patch.version?.version != null && Number(patch.version.version) !== version) throw new Error(`${name}: the patch says version ${String(patch.version.version)}, not ${version}`);
  if (!equal(patch.keyId?.id, key.keyId)) throw new Error(`${name}: the patch is under an unknown app-state key`);
  const keys = mutationKeys(key.keyData);
  const live = new Map(state.live);
  const add: Buffer[] = [];
  const sub: Buffer[] = [];
  const valueMacs: Buffer[] = [];
  const decoded: DecodedMutation[] = [];
  for (const m of patch.mutations ?? []) {
    const remove = m.operation === proto.SyncdMutation.SyncdOperation.REMOVE;
    const indexMac = Buffer.from(m.record?.index?.blob ?? []);
    const blob = Buffer.from(m.record?.value?.blob ?? []);
    if (blob.length < 16 + 16 + 32) throw new Error(`${name}: a mutation value is too short`);
    const enc = blob.subarray(0, -32);
    const valueMac = blob.subarray(-32);
    const opAndKey = Buffer.concat([Buffer.from([remove ? 0x02 : 0x01]), key.keyId]);
    const length = Buffer.alloc(8);
    length[7] = opAndKey.length;
    const expectedValueMac = createHmac('sha512', keys.valueMacKey).update(Buffer.concat([opAndKey, enc, length])).digest().subarray(0, 32);
    if (!equal(valueMac, expectedValueMac)) throw new Error(`${name}: a value MAC does not check out`);
    const decipher = createDecipheriv('aes-256-cbc', keys.valueEncryptionKey, enc.subarray(0, 16));
    const data = proto.SyncActionData.decode(Buffer.concat([decipher.update(enc.subarray(16)), decipher.final()]));
    const indexBytes = Buffer.from(data.index ?? []);
    if (!equal(indexMac, createHmac('sha256', keys.indexKey).update(indexBytes).digest())) throw new Error(`${name}: an index MAC does not check out`);
    const id = indexMac.toString('base64');
    const prev = live.get(id);
    if (prev) sub.push(prev);
    if (remove) live.delete(id);
    else {
      live.set(id, valueMac);
      add.push(valueMac);
    }
    valueMacs.push(valueMac);
    decoded.push({ operation: remove ? 'remove' : 'set', index: JSON.parse(indexBytes.toString()) as string[], value: data.value ?? {}, version: data.version ?? 0 });
  }
  const hash = ltHashMix(state.hash, add, sub);
  const sMac = snapshotMac(hash, version, name, keys);
  if (!equal(patch.snapshotMac, sMac)) throw new Error(`${name}: the snapshot MAC does not match the LT hash of the collection after the patch`);
  if (!equal(patch.patchMac, patchMac(sMac, valueMacs, version, name, keys))) throw new Error(`${name}: the patch MAC does not check out`);
  state.live = live;
  state.hash = hash;
  state.version = version;
  state.mutations += decoded.length;
  state.patches.push({ version, bytes: Buffer.from(bytes) });
  return decoded;
}

/** Appends a patch made on the phone (`mutations`, one version) to `state`; the devices fetch it after a server_sync notification. */
export function appendPhonePatch(state: CollectionState, key: AppStateKey, mutations: Mutation[]): void {
  const keys = mutationKeys(key.keyData);
  const records = mutations.map((m) => encodeMutation(m, key, keys));
  const add: Buffer[] = [];
  const sub: Buffer[] = [];
  for (const r of records) {
    const id = r.indexMac.toString('base64');
    const prev = state.live.get(id);
    if (prev) sub.push(prev);
    if (r.operation === proto.SyncdMutation.SyncdOperation.REMOVE) state.live.delete(id);
    else {
      state.live.set(id, r.valueMac);
      add.push(r.valueMac);
    }
  }
  state.hash = ltHashMix(state.hash, add, sub);
  state.version += 1;
  const sMac = snapshotMac(state.hash, state.version, state.name, keys);
  const bytes = proto.SyncdPatch.encode({
    version: { version: state.version },
    mutations: records.map((r) => ({ operation: r.operation, record: r.record })),
    snapshotMac: sMac,
    patchMac: patchMac(sMac, records.map((r) => r.valueMac), state.version, state.name, keys),
    keyId: { id: key.keyId },
  }).finish();
  state.patches.push({ version: state.version, bytes: Buffer.from(bytes) });
  state.mutations += mutations.length;
}
