/**
 * No stall while phones pair (issue 26 item 3): a first login decodes the account's app state, and
 * Baileys did every mutation of a snapshot in one turn of the event loop (its keys come from a
 * cache after the first, so nothing in the loop waited). `patches/` makes its decodeSyncdMutations
 * ask the daemon's time slices (src/connection/baileys/app-state-slices.ts) before each mutation.
 * Guards: with the hook installed, decoding a snapshot of 3,000 mutations lets the event loop turn
 * (immediates run in between) and decodes exactly what the protocol double's independent encoder
 * built (same LT hash, every index); without the hook it runs as upstream does, in one turn, which
 * also shows this test can fail (a Baileys installed without the patch fails the first assertion).
 * The first decode also runs every MAC check (each mutation's value and index MACs, the snapshot's)
 * through the gateway's object-free HMAC (app-state-hmac.ts, the other part of the patch): one
 * wrong byte and Baileys refuses the snapshot.
 */
import test from 'ava';
import { decodeSyncdSnapshot, proto } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { APP_STATE_PAUSE_KEY, installAppStateSlices } from '../../src/connection/baileys/app-state-slices.js';
import { BAILEYS_HMAC_KEY, installBaileysHmac } from '../../src/connection/baileys/app-state-hmac.js';
import { buildCollection, newAppStateKey, type Mutation } from '../protocol-double/app-state.js';

const MUTATIONS = 3000;
const key = newAppStateKey();
const contacts: Mutation[] = Array.from({ length: MUTATIONS }, (_, i) => ({
  index: ['contact', `1555${String(i).padStart(7, '0')}@s.whatsapp.net`],
  value: { timestamp: 1_700_000_000 + i, contactAction: { fullName: `Contact ${i}`, firstName: `C${i}` } },
  version: 2,
}));
const collection = buildCollection('critical_unblock_low', key, contacts, 1, []);
const getKey = async (id: string) => (id === key.keyId.toString('base64') ? proto.Message.AppStateSyncKeyData.fromObject({ keyData: key.keyData, timestamp: key.timestamp }) : undefined);

/** Decodes the snapshot, counting the turns of the event loop (immediates that ran) meanwhile. */
async function decodeCountingTurns(): Promise<{ turns: number; result: Awaited<ReturnType<typeof decodeSyncdSnapshot>> }> {
  let turns = 0;
  let done = false;
  const turn = () => {
    if (done) return;
    turns += 1;
    setImmediate(turn);
  };
  const snapshot = proto.SyncdSnapshot.decode(collection.snapshot!);
  setImmediate(turn);
  // Started from a fresh turn, so the slice it runs in begins with it.
  await new Promise((resolve) => setImmediate(resolve));
  const before = turns;
  const result = await decodeSyncdSnapshot('critical_unblock_low', snapshot, getKey, undefined, true, pino({ level: 'silent' }));
  done = true;
  return { turns: turns - before, result };
}

function checkDecoded(t: import('ava').ExecutionContext, result: Awaited<ReturnType<typeof decodeSyncdSnapshot>>): void {
  t.is(Buffer.from(result.state.hash).toString('base64'), collection.hash.toString('base64'), 'the LT hash the double computed');
  t.is(result.state.version, 1);
  t.is(Object.keys(result.state.indexValueMap).length, MUTATIONS);
  t.is(Object.keys(result.mutationMap).length, MUTATIONS);
  t.is(result.mutationMap[JSON.stringify(contacts[42]!.index)]?.syncAction.value?.contactAction?.fullName, 'Contact 42');
}

test.serial('with the hooks, a snapshot of 3,000 mutations is decoded over many turns of the event loop, and decoded right, its MACs checked by the object-free HMAC', async (t) => {
  installAppStateSlices();
  installBaileysHmac();
  const { turns, result } = await decodeCountingTurns();
  t.true(turns >= 2, `the event loop turned ${turns} times while the snapshot was decoded (is patches/ applied to Baileys?)`);
  checkDecoded(t, result);
});

test.serial('without the hooks, Baileys decodes as upstream does: the same result, in one turn', async (t) => {
  delete (globalThis as Record<symbol, unknown>)[APP_STATE_PAUSE_KEY];
  delete (globalThis as Record<symbol, unknown>)[BAILEYS_HMAC_KEY];
  const { turns, result } = await decodeCountingTurns();
  t.is(turns, 0);
  checkDecoded(t, result);
});
