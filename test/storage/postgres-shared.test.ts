/**
 * Issue 23 part 1: several processes on one PostgreSQL database. Two storages opened on the same
 * database are two processes to it (each its own pools and session): each learns the instance
 * rows and credit additions the other wrote (LISTEN/NOTIFY, `onChange` never told of its own
 * writes), the owner's trial is granted once across them, and their holds never exceed the balance.
 */
import test from 'ava';
import { postgresEngine, testConfig, type StorageLocation } from './engines.js';
import { outgoing } from './scenarios.js';
import type { Storage } from '../../src/storage/storage.js';

async function twoProcesses(): Promise<{ a: Storage; b: Storage; done(): Promise<void> }> {
  const at: StorageLocation = await postgresEngine.location();
  const a = await at.open();
  const b = await at.open();
  return {
    a,
    b,
    async done() {
      await a.close();
      await b.close();
      await at.destroy();
    },
  };
}

/** Resolves once `check` holds (the other process learns of a change asynchronously). */
async function eventually(check: () => boolean, ms = 5_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

test.serial('postgres: another process is told of instance rows this one changed, never of its own', async (t) => {
  const { a, b, done } = await twoProcesses();
  try {
    const seenByA: string[] = [];
    const seenByB: string[] = [];
    a.instances.onChange((id) => seenByA.push(id));
    b.instances.onChange((id) => seenByB.push(id));
    const { record } = await a.instances.create({ name: 'shared' });
    t.true(await eventually(() => b.instances.get(record.id)?.name === 'shared'));
    await a.instances.modify(record.id, (r) => {
      r.name = 'renamed';
    });
    t.true(await eventually(() => b.instances.get(record.id)?.name === 'renamed'));
    await b.instances.markDeleting(record.id);
    t.true(await eventually(() => a.instances.get(record.id) === undefined && a.instances.getAny(record.id)?.deleting === true));
    await b.instances.remove(record.id);
    t.true(await eventually(() => a.instances.getAny(record.id) === undefined));
    t.true(await eventually(() => seenByB.length === 2 && seenByA.length === 2));
    t.deepEqual(seenByB, [record.id, record.id], 'B heard the create and the rename');
    t.deepEqual(seenByA, [record.id, record.id], 'A heard the mark and the removal');
  } finally {
    await done();
  }
});

test.serial('postgres: concurrent creates of one owner in two processes grant the trial once', async (t) => {
  const { a, b, done } = await twoProcesses();
  try {
    const created = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? a : b).instances.create({ owner: 'erin' })));
    t.is(created.filter((c) => c.trialGranted).length, 1);
  } finally {
    await done();
  }
});

test.serial('postgres: holds of two processes never exceed the balance, and credits one adds reach the other', async (t) => {
  const { a, b, done } = await twoProcesses();
  try {
    const id = 'inst_shared0001';
    await a.credits.add(id, 10);
    t.true(await eventually(() => b.credits.balance(id) === 10));
    const holds = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).credits.hold(id)));
    const got = holds.filter((h) => h !== null);
    t.is(got.length, 10);
    await Promise.all(got.map((h) => h.commit()));
    await a.credits.add(id, 1);
    t.true(await eventually(() => b.credits.balance(id) === 1), `b sees ${b.credits.balance(id)}`);
  } finally {
    await done();
  }
});

test.serial('postgres: an instance taken over is counted again: the bound per chat holds whoever wrote last (issue 23)', async (t) => {
  // Each process keeps its chats' row counts to evict cheaply; another process may write the
  // instance between two leases, so taking it over (`adopted`) forgets them.
  const at: StorageLocation = await postgresEngine.location();
  const config = testConfig({ history: { maxMessagesPerChat: 5 } });
  const a = await at.open({ config });
  const b = await at.open({ config });
  try {
    const ID = 'inst_shared_bound';
    const chat = 'a@s.whatsapp.net';
    const now = Date.now();
    const write = (s: Storage, ids: string[]) => Promise.all(ids.map((id, i) => s.messages.recordOutgoing(ID, outgoing(id, chat, now + i), true)));
    await write(a, ['A1', 'A2']);
    // Another node owns the instance for a while and fills the chat.
    b.messages.adopted?.(ID);
    await write(b, ['B1', 'B2', 'B3', 'B4']);
    t.deepEqual((await b.messages.chatMessages(ID, chat, 10))?.messages.map((m) => m.messageId), ['B4', 'B3', 'B2', 'B1', 'A2']);
    // It comes back: without counting again, A would believe the chat holds 2.
    a.messages.adopted?.(ID);
    await write(a, ['A3', 'A4']);
    t.deepEqual((await a.messages.chatMessages(ID, chat, 10))?.messages.map((m) => m.messageId), ['A4', 'A3', 'B4', 'B3', 'B2']);
  } finally {
    await a.close();
    await b.close();
    await at.destroy();
  }
});

