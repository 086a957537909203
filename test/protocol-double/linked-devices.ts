import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, type BinaryNode } from '@whiskeysockets/baileys';
import type { Account, Device } from './phone.js';

/** What relaying between an account's linked devices needs of the double's server. */
export interface LinkedDevicesWire {
  accountByJid(jid: string): Account | undefined;
  devicesOf(account: Account): Device[];
  deliver(device: Device, node: BinaryNode): void;
  logLine(line: string): void;
}

/** A message one linked device sent that the double handed to another device of the same account. */
export interface RelayedMessage {
  id: string;
  /** The chat it was written to (the `recipient` of a 1:1 copy, or the group). */
  chat: string;
  from: Device;
  to: Device;
}

/**
 * An account's other linked devices (issue 24, "messages the account sends from the phone or
 * another linked device"). When Baileys sends, it encrypts a copy for every device of its own
 * account that usync listed besides itself: the phone (device 0, decrypted by the double's phone)
 * and the other companions. WhatsApp hands each companion its copy as it hands the phone's own
 * messages to them: 1:1 `<message from=SENDER_DEVICE recipient=CHAT>` (the content is a
 * `deviceSentMessage`, which Baileys unwraps), in a group `<message from=GROUP
 * participant=SENDER_DEVICE>` with the pairwise SKDM when there is one, then the `skmsg`. The
 * receiving Baileys decrypts with the session the sender started (pkmsg) and reports the message
 * as fromMe. Without this the double dropped those copies silently.
 */
export class LinkedDevices {
  readonly relayed: RelayedMessage[] = [];

  constructor(private readonly wire: LinkedDevicesWire) {}

  /** The linked device (not the phone, device 0) a `<to jid>` names, if the double knows it. */
  deviceOf(jid: string | undefined): Device | undefined {
    const decoded = jid ? jidDecode(jid) : undefined;
    if (!jid || !decoded?.device) return undefined;
    const account = this.wire.accountByJid(jid);
    return account ? this.wire.devicesOf(account).find((d) => d.deviceId === decoded.device) : undefined;
  }

  /** Hands each `<to>` of `node` (a `<message>` from `sender`) that names another linked device to it. */
  relay(sender: Device, node: BinaryNode, participants: BinaryNode[]): void {
    const chat = node.attrs.to ?? '';
    const id = node.attrs.id ?? '';
    const t = node.attrs.t ?? String(Math.floor(Date.now() / 1000));
    const skmsg = chat.endsWith('@g.us') ? getBinaryNodeChildren(node, 'enc').find((e) => e.attrs.type === 'skmsg') : undefined;
    /** Each device to hand a copy to: its pairwise `<enc>` (if any) and whether it was addressed by LID. */
    const targets = new Map<Device, { pairwise?: BinaryNode; lid: boolean }>();
    for (const p of participants) {
      const target = this.deviceOf(p.attrs.jid);
      const enc = getBinaryNodeChild(p, 'enc');
      if (target && target !== sender && target.account === sender.account) targets.set(target, { ...(enc ? { pairwise: enc } : {}), lid: p.attrs.jid?.endsWith('@lid') === true });
    }
    // A group message whose sender key every device already has carries no pairwise `<to>`: the
    // other devices still get the skmsg.
    if (skmsg) {
      for (const d of this.wire.devicesOf(sender.account)) if (d !== sender && !targets.has(d)) targets.set(d, { lid: node.attrs.addressing_mode === 'lid' });
    }
    for (const [target, { pairwise, lid }] of targets) {
      // The sender as the receiver knows it: by LID when its copy was addressed by LID.
      const from = lid ? sender.lid : sender.jid;
      const content = [...(pairwise ? [pairwise] : []), ...(skmsg ? [skmsg] : [])];
      if (content.length === 0) continue;
      const attrs: Record<string, string> = skmsg
        ? { from: chat, participant: from, id, t, type: node.attrs.type ?? 'text', ...(node.attrs.addressing_mode ? { addressing_mode: node.attrs.addressing_mode } : {}) }
        : { from, recipient: chat, id, t, type: node.attrs.type ?? 'text' };
      this.wire.deliver(target, { tag: 'message', attrs, content });
      this.relayed.push({ id, chat, from: sender, to: target });
      this.wire.logLine(`relayed ${id} (${chat}) from ${sender.jid} to ${target.jid}`);
    }
  }
}
