import { useEffect, useState, useSyncExternalStore } from 'react';

/**
 * Incoming calls as the inbox shows them. The gateway keeps no history of calls: they are
 * `call.received` events (webhooks and live events), so the panel keeps the calls that ring while
 * its inbox is open, in memory, for the page's lifetime (the last MAX_CALLS of each instance).
 * A reload forgets them; the webhook has every call.
 */
export interface CallSeen {
  callId: string;
  /** The caller's chat (a group's, for a call from within a group). */
  chatId: string;
  from: string | null;
  sender: string;
  isVideo: boolean;
  isGroup: boolean;
  /** When WhatsApp said it rang (the event's time). */
  timestamp: string;
  /** When this page heard of it (the browser's clock): how long it may still ring is counted from here. */
  seenAt: number;
  /**
   * ringing: nothing known since it rang; rejected: rejected from this page; auto-rejected: the
   * instance's `calls.autoReject` was on when it rang; over: the gateway no longer knew it (404).
   */
  state: 'ringing' | 'rejected' | 'auto-rejected' | 'over';
}

const MAX_CALLS = 50;
/** WhatsApp rings for about 45 s: a call older than this is not offered for rejection any more. */
export const RINGS_MS = 60_000;

const EMPTY: readonly CallSeen[] = [];
const calls = new Map<string, readonly CallSeen[]>();
const listeners = new Set<() => void>();
const changed = (): void => listeners.forEach((fn) => fn());

/** The data of a `call.received` event, checked field by field (it came over the wire). */
export function callFromEvent(data: Record<string, unknown>, seenAt: number): CallSeen | null {
  const { callId, chatId, from, sender, isVideo, isGroup, timestamp } = data;
  if (typeof callId !== 'string' || typeof chatId !== 'string' || typeof sender !== 'string' || typeof timestamp !== 'string') return null;
  return { callId, chatId, from: typeof from === 'string' ? from : null, sender, isVideo: isVideo === true, isGroup: isGroup === true, timestamp, seenAt, state: 'ringing' };
}

export function addCall(instanceId: string, call: CallSeen): void {
  const list = calls.get(instanceId) ?? EMPTY;
  if (list.some((c) => c.callId === call.callId)) return;
  calls.set(instanceId, [...list, call].slice(-MAX_CALLS));
  changed();
}

export function setCallState(instanceId: string, callId: string, state: CallSeen['state']): void {
  const list = calls.get(instanceId);
  if (!list?.some((c) => c.callId === callId && c.state !== state)) return;
  calls.set(
    instanceId,
    list.map((c) => (c.callId === callId ? { ...c, state } : c)),
  );
  changed();
}

const subscribe = (fn: () => void): (() => void) => {
  listeners.add(fn);
  return () => listeners.delete(fn);
};

/** The calls this page has seen for an instance, oldest first. */
export function useCalls(instanceId: string): readonly CallSeen[] {
  return useSyncExternalStore(subscribe, () => calls.get(instanceId) ?? EMPTY);
}

/** Whether a call may still be ringing (and so be rejected). */
export const mayRing = (c: CallSeen, now: number): boolean => c.state === 'ringing' && now - c.seenAt < RINGS_MS;

/** The time now, renewed every few seconds while some call may still ring (its Reject button then goes). */
export function useRingClock(list: readonly CallSeen[]): number {
  const [now, setNow] = useState(() => Date.now());
  const ringing = list.some((c) => mayRing(c, now));
  useEffect(() => {
    if (!ringing) return;
    const timer = setInterval(() => setNow(Date.now()), 2_000);
    return () => clearInterval(timer);
  }, [ringing]);
  return now;
}
