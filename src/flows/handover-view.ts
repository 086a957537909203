import type { Handover } from './types.js';

/** True while `handover` mutes its chat at time `now`. */
export function isOpen(handover: Handover, now: number): boolean {
  return Date.parse(handover.expiresAt) > now;
}

/** A handover as REST and the CLI's --json show it. */
export function handoverView(h: Handover) {
  return { phone: h.phone === '' ? null : h.phone, chatId: h.chatId, fromName: h.fromName ?? null, flow: h.flow, node: h.node, openedAt: h.openedAt, expiresAt: h.expiresAt, claimedBy: h.claimedBy ?? null };
}
