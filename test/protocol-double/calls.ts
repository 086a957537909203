import { randomBytes } from 'node:crypto';
import { getBinaryNodeChild, type BinaryNode } from '@whiskeysockets/baileys';
import { newStanzaId, type Contact } from './contact.js';
import type { Group } from './group.js';
import type { Account, Device } from './phone.js';

/** What calls need from the double's server. */
export interface CallsWire {
  account(phone?: string): Account;
  devicesOf(account: Account): Device[];
  deliver(device: Device, node: BinaryNode): void;
  logLine(line: string): void;
}

export interface OfferedCall {
  callId: string;
  from: Contact;
  video: boolean;
  group?: Group;
}

/** A reject the account's device sent (`<call><reject call-id call-creator/></call>`). */
export interface CallReject {
  callId: string;
  /** Who the reject went to (`to`). */
  to: string;
  callCreator: string;
  device: Device;
}

/**
 * Calls on the double: a contact rings the account (voice, video, or from a group: WhatsApp's
 * `<call><offer>` stanza, as Baileys' handleCall reads it), and what the account's devices answer
 * (rejects) is recorded. No media flows: the double plays signalling only.
 */
export class CallOps {
  readonly offered: OfferedCall[] = [];
  readonly rejects: CallReject[] = [];

  constructor(private readonly wire: CallsWire) {}

  /** `from` calls the account (default phone); resolves with the call id. */
  offer(from: Contact, options: { video?: boolean; group?: Group; phone?: string } = {}): string {
    const callId = randomBytes(16).toString('hex').toUpperCase();
    const account = this.wire.account(options.phone);
    const caller = from.addressing === 'lid' ? from.lid : from.jid;
    const offerAttrs: Record<string, string> = { 'call-id': callId, 'call-creator': caller };
    if (from.addressing === 'lid' && !from.hidesPhone) offerAttrs.caller_pn = from.jid;
    if (options.group) {
      offerAttrs.type = 'group';
      offerAttrs['group-jid'] = options.group.jid;
    }
    const media: BinaryNode[] = [
      { tag: 'audio', attrs: { enc: 'opus', rate: '16000' } },
      { tag: 'audio', attrs: { enc: 'opus', rate: '8000' } },
      ...(options.video ? [{ tag: 'video', attrs: { enc: 'vp8', dec: 'vp8', orientation: '0', screen_width: '1080', screen_height: '2340', device_orientation: '0' } }] : []),
      { tag: 'net', attrs: { medium: '3' } },
      { tag: 'encopt', attrs: { keygen: '2' } },
    ];
    const node: BinaryNode = {
      tag: 'call',
      attrs: { from: caller, id: newStanzaId(), t: String(Math.floor(Date.now() / 1000)), notify: from.name, platform: 'android', version: '2.25.1.1' },
      content: [{ tag: 'offer', attrs: offerAttrs, content: media }],
    };
    this.offered.push({ callId, from, video: options.video ?? false, ...(options.group ? { group: options.group } : {}) });
    for (const device of this.wire.devicesOf(account)) this.wire.deliver(device, node);
    this.wire.logLine(`${from.phone} calls ${account.phone} (${callId}${options.video ? ', video' : ''}${options.group ? `, in ${options.group.jid}` : ''})`);
    return callId;
  }

  /** A `<call>` from a linked device: a reject is recorded and acknowledged as the server does. */
  fromDevice(device: Device, node: BinaryNode): BinaryNode {
    const reject = getBinaryNodeChild(node, 'reject');
    if (reject) {
      this.rejects.push({ callId: reject.attrs['call-id'] ?? '', to: node.attrs.to ?? '', callCreator: reject.attrs['call-creator'] ?? '', device });
      this.wire.logLine(`${device.jid} rejected call ${reject.attrs['call-id'] ?? ''}`);
    }
    const child = Array.isArray(node.content) ? node.content[0] : undefined;
    return { tag: 'ack', attrs: { id: node.attrs.id ?? '', class: 'call', from: node.attrs.to ?? '', ...(child ? { type: child.tag } : {}) } };
  }
}
