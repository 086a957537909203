/**
 * Guards the usage counts per day (GET /api/instances/{id}/usage): `utcDate` keeps the day it
 * formatted last, and must still give each time its own UTC day across midnights, backwards in
 * time, and before 1970.
 */
import test from 'ava';
import { utcDate } from '../../src/storage/ports/usage.js';

test('each time gets its own UTC day, whatever was asked before', (t) => {
  const times = [
    Date.UTC(2026, 10, 29, 23, 59, 59, 999),
    Date.UTC(2026, 10, 30, 0, 0, 0, 0),
    Date.UTC(2026, 10, 29, 0, 0, 0, 0),
    Date.UTC(2026, 10, 28, 23, 59, 59, 999),
    Date.UTC(2026, 10, 30, 12),
    Date.UTC(1969, 11, 31, 23, 59, 59, 999),
    0,
    Date.UTC(2027, 0, 1),
    Date.UTC(2026, 11, 31, 23, 59, 59, 999),
  ];
  for (const ms of times) t.is(utcDate(ms), new Date(ms).toISOString().slice(0, 10), `at ${ms}`);
  // The same times again, in reverse order.
  for (const ms of [...times].reverse()) t.is(utcDate(ms), new Date(ms).toISOString().slice(0, 10), `at ${ms}`);
});
