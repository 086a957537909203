/**
 * The auth state port's contract (issue 22; issue 23: the same on PostgreSQL): a snapshot is read
 * back as one moment (creds and key tables together), tables not changed keep what they held,
 * tables no longer there go, `isPaired` answers without loading, an unreadable stored state is
 * STORE_CORRUPT (never silently a new pairing), remove forgets it, and what was acknowledged
 * survives kill -9.
 */
import { crashRun } from './crash.js';
import { engineTest } from './engines.js';
import { authSnapshot } from './scenarios.js';
import type { AuthSnapshot } from '../../src/storage/ports/auth-state.js';
import { reviveBuffers } from '../../src/connection/baileys/buffer-json.js';
import { AuthStore, PACKED_ROWS } from '../../src/connection/baileys/auth-state.js';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';

const ID = 'inst_auth000001';
const asIs = (v: unknown): unknown => v;
/** A revive that marks each document it is given (the creds, each key table) and its `n`. */
const mark = (v: unknown): unknown => (typeof v === 'object' && v !== null && 'n' in v ? { ...v, n: `n=${String((v as { n: unknown }).n)}` } : v);

engineTest('auth: a snapshot is read back whole (revived: the creds and each key table), after a reopen too; isPaired follows the mark', async (t, at) => {
  const s = await at.open();
  t.is(await s.auth.read(ID, asIs), null);
  t.false(await s.auth.isPaired(ID));
  await s.auth.write(ID, authSnapshot(1, false));
  t.false(await s.auth.isPaired(ID));
  await s.auth.write(ID, authSnapshot(2));
  t.true(await s.auth.isPaired(ID));
  await s.close();
  const again = await at.open();
  const revived = await again.auth.read(ID, mark);
  t.deepEqual(revived, { creds: { n: 'n=2', me: { id: '15551234567@s.whatsapp.net' } }, keys: { 'pre-key': { n: 'n=2', type: 'pre-key' }, session: { n: 'n=2', type: 'session' } } });
  t.true(await again.auth.isPaired(ID));
});

engineTest('auth: a table not changed keeps what it held, a table no longer in the snapshot goes', async (t, at) => {
  const s = await at.open();
  await s.auth.write(ID, authSnapshot(1));
  const next: AuthSnapshot = {
    creds: JSON.stringify({ n: 2 }),
    paired: true,
    // pre-key unchanged (its JSON is what was written), session dropped, app-state new.
    tables: [
      { type: 'pre-key', changed: false, json: () => JSON.stringify({ n: 1, type: 'pre-key' }) },
      { type: 'app-state', changed: true, json: () => JSON.stringify({ n: 2 }) },
    ],
  };
  await s.auth.write(ID, next);
  t.deepEqual(await s.auth.read(ID, asIs), { creds: { n: 2 }, keys: { 'pre-key': { n: 1, type: 'pre-key' }, 'app-state': { n: 2 } } });
});

engineTest('auth: a stored state its revive cannot decode (JSON nested 20,000 deep) is STORE_CORRUPT, not a crash', async (t, at) => {
  const s = await at.open();
  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  await s.auth.write(ID, { creds: JSON.stringify({ n: 1 }), paired: true, tables: [{ type: 'session', changed: true, json: () => deep }] });
  const err = await t.throwsAsync(s.auth.read(ID, reviveBuffers));
  t.is((err as { code?: string }).code, 'STORE_CORRUPT');
});

engineTest('auth: an unreadable stored state is STORE_CORRUPT and is left alone; remove forgets it', async (t, at) => {
  const s = await at.open();
  await s.auth.write(ID, authSnapshot(1));
  await at.corruptAuth(ID);
  const err = await t.throwsAsync(s.auth.read(ID, asIs));
  t.is((err as { code?: string }).code, 'STORE_CORRUPT');
  t.is(typeof (await s.auth.isPaired(ID)), 'boolean', 'isPaired does not throw');
  const still = await t.throwsAsync(s.auth.read(ID, asIs));
  t.is((still as { code?: string }).code, 'STORE_CORRUPT', 'reading it again finds it as it was');
  await s.auth.remove(ID);
  t.is(await s.auth.read(ID, asIs), null);
  t.false(await s.auth.isPaired(ID));
});

engineTest('auth: after kill -9 mid-writes the state is one acknowledged moment (or the one being written), never a mix', async (t, at) => {
  const run = await crashRun<{ n: number }>(at, 'auth', { id: ID, count: 100_000 }, (acks) => acks.length >= 30);
  t.true(run.acks.length >= 30, run.stderr);
  const last = Math.max(...run.acks.map((a) => a.n));
  const s = await at.open();
  const state = (await s.auth.read(ID, asIs)) as { creds: { n: number }; keys: Record<string, { n: number }> };
  t.true(state.creds.n === last || state.creds.n === last + 1, `creds at ${state.creds.n}, last acknowledged ${last}`);
  t.is(state.keys['pre-key']?.n, state.creds.n);
  t.is(state.keys.session?.n, state.creds.n);
  t.true(await s.auth.isPaired(ID));
});

// Logins and memory (issue 26 item 2): the connection layer stores a session's one-time pre-keys
// packed (one base64 member of the pre-key table, auth-state.ts PACKED_ROWS); every engine keeps
// that table as the JSON it was given, so 812 pre-keys come back byte for byte after a reopen.
engineTest('auth: 812 packed pre-keys saved through AuthStore come back byte for byte after a reopen', async (t, at) => {
  const s = await at.open();
  const store = await AuthStore.open(s.auth, ID, { logger: pino({ level: 'silent' }), debounceMs: 5 });
  const pairs: Record<string, { private: Buffer; public: Buffer }> = {};
  for (let id = 1; id <= 812; id++) pairs[String(id)] = { private: randomBytes(32), public: randomBytes(32) };
  await store.state.keys.set({ 'pre-key': pairs });
  await store.flush();
  const stored = (await s.auth.read(ID, asIs)) as { keys: Record<string, Record<string, unknown>> };
  t.deepEqual(Object.keys(stored.keys['pre-key'] ?? {}), [PACKED_ROWS], 'one packed member, not 812 entries');
  await s.close();
  const again = await at.open();
  const reopened = await AuthStore.open(again.auth, ID, { logger: pino({ level: 'silent' }) });
  const got = await reopened.state.keys.get('pre-key', Object.keys(pairs));
  t.is(Object.keys(got).length, 812);
  const differ = Object.entries(pairs).filter(([id, pair]) => !(got[id] && Buffer.from(got[id].private).equals(pair.private) && Buffer.from(got[id].public).equals(pair.public)));
  t.deepEqual(differ.map(([id]) => id), []);
});
