import test from 'ava';
import { effectiveStatus, isPremium, quotaRemaining, requiresPremium } from '../../src/plans/rules.js';

const now = Date.UTC(2026, 5, 1);
const future = { premiumUntil: new Date(now + 1000).toISOString() };
const past = { premiumUntil: new Date(now - 1000).toISOString() };
const never = { premiumUntil: null };

test('premium while premiumUntil is in the future', (t) => {
  t.true(isPremium(future, now));
  t.false(isPremium(past, now));
  t.false(isPremium(never, now));
});

test('quotaRemaining is "unlimited" while premium, else the balance as a string', (t) => {
  t.is(quotaRemaining(future, 5, now), 'unlimited');
  t.is(quotaRemaining(past, 41, now), '41');
  t.is(quotaRemaining(never, 0, now), '0');
});

test('requires_premium only when premium lapsed and no credits remain', (t) => {
  t.true(requiresPremium(past, 0, now));
  t.false(requiresPremium(past, 1, now));
  t.false(requiresPremium(never, 0, now));
  t.false(requiresPremium(future, 0, now));
  t.is(effectiveStatus(past, 0, now, 'connected'), 'requires_premium');
  t.is(effectiveStatus(past, 2, now, 'connected'), 'connected');
});
