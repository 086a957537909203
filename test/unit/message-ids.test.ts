/**
 * Guards issue 21 item 11: message ids are unlinkable. One process-wide seed and counter let a
 * tenant count other tenants' traffic (`…CCF500000003` then `…04` from another instance).
 */
import test from 'ava';
import { newMessageId } from '../../src/domain/ids.js';

test('message ids share nothing with the ids made before them: no common seed, no counter', (t) => {
  const ids = Array.from({ length: 2000 }, () => newMessageId());
  t.is(new Set(ids).size, ids.length, 'unique');
  for (const id of ids) t.regex(id, /^3EB0[0-9A-F]{18}$/);
  // With 72 random bits, two ids agreeing on their first 6 random bytes is a 2^-48 event; a seed
  // shared by every id (the old scheme) makes every pair agree on 5.
  let linked = 0;
  for (let i = 1; i < ids.length; i++) if (ids[i]!.slice(4, 16) === ids[i - 1]!.slice(4, 16)) linked += 1;
  t.is(linked, 0);
  // A counter shows as a small difference between neighbours' tails.
  let counting = 0;
  for (let i = 1; i < ids.length; i++) if (Math.abs(parseInt(ids[i]!.slice(-8), 16) - parseInt(ids[i - 1]!.slice(-8), 16)) < 16) counting += 1;
  t.true(counting < 3, `${counting} neighbours look counted`);
});
