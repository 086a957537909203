/**
 * Issue 25 (the audit log): the audit port's contract on every engine. Entries come back newest
 * first, whole, filtered by instance and actor, a page at a time with a cursor that never repeats
 * or skips an entry (also with appends in between), survive a reopen, and the sweep takes away
 * what is older than the bound and nothing newer.
 */
import type { AuditEntry } from '../../src/storage/ports/audit.js';
import { engineTest } from './engines.js';

const DAY = 86_400_000;
const entry = (at: number, actor: string, action: string, instanceId?: string): AuditEntry => ({
  at: new Date(at).toISOString(),
  actor,
  action,
  ...(instanceId ? { instanceId, target: `${instanceId}-target` } : {}),
  outcome: 'ok',
});

engineTest('audit: newest first, filters, pages with a cursor, a reopen, and the sweep by age', async (t, at) => {
  const s = await at.open();
  const now = Date.parse('2026-03-10T12:00:00.000Z');
  const written: AuditEntry[] = [];
  // Over three days, two instances, two actors.
  for (let i = 0; i < 30; i += 1) {
    const e = entry(now - (29 - i) * (DAY / 10), i % 3 === 0 ? 'operator:ann' : 'secret', i % 2 === 0 ? 'credits.add' : 'key.rotate', i % 2 === 0 ? 'inst_aaaaaaaaaaaa' : 'inst_bbbbbbbbbbbb');
    await s.audit.append(e);
    written.push(e);
  }
  const newest = [...written].reverse();
  t.deepEqual((await s.audit.query({ limit: 5 })).entries, newest.slice(0, 5));
  t.deepEqual((await s.audit.query({ limit: 100, instanceId: 'inst_aaaaaaaaaaaa' })).entries, newest.filter((e) => e.instanceId === 'inst_aaaaaaaaaaaa'));
  t.deepEqual((await s.audit.query({ limit: 100, actor: 'operator:ann' })).entries, newest.filter((e) => e.actor === 'operator:ann'));
  t.deepEqual((await s.audit.query({ limit: 100, actor: 'operator:ann', instanceId: 'inst_bbbbbbbbbbbb' })).entries, newest.filter((e) => e.actor === 'operator:ann' && e.instanceId === 'inst_bbbbbbbbbbbb'));

  // Pages of 7: every entry once, in order, even with an append between two pages.
  const seen: AuditEntry[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await s.audit.query({ limit: 7, ...(cursor ? { cursor } : {}) });
    seen.push(...page.entries);
    pages += 1;
    if (pages === 2) await s.audit.append(entry(now + 1, 'secret', 'late'));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  t.deepEqual(seen, newest);
  t.is(pages, 5);
  await t.throwsAsync(s.audit.query({ limit: 5, cursor: 'not-a-cursor' }), { message: /cursor/ });
  await s.close();

  const again = await at.open();
  const all = (await again.audit.query({ limit: 100 })).entries;
  t.is(all.length, 31);
  t.is(all[0]!.action, 'late');
  // The sweep: whatever is older than the bound may go (the files engine removes whole UTC days,
  // so entries of the cut-off day itself may stay), nothing newer may.
  const before = now - DAY;
  const dayStart = Date.parse(new Date(before).toISOString().slice(0, 10));
  await again.audit.sweep(before);
  const kept = (await again.audit.query({ limit: 100 })).entries;
  t.deepEqual(
    kept.filter((e) => Date.parse(e.at) >= before),
    all.filter((e) => Date.parse(e.at) >= before),
    'nothing newer than the bound went',
  );
  t.deepEqual(kept.filter((e) => Date.parse(e.at) < dayStart), [], 'nothing from before the cut-off day stays');
  t.true(kept.length < all.length);
});
