import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { getBinaryNodeChild, getBinaryNodeChildren, jidDecode, proto, type BinaryNode } from '@whiskeysockets/baileys';
import { acceptDevicePatch, appendPhonePatch, type DecodedMutation } from './app-state-patches.js';
import type { CollectionName, Mutation } from './app-state.js';
import { newStanzaId, type Contact, type ContactMediaKind } from './contact.js';
import type { Account, Device } from './phone.js';
import type { ProtocolDouble, Session } from './server.js';

/**
 * What WhatsApp's server and the account's phone do for an account beyond messages, for the
 * double: profiles (about text and picture, the account's and its contacts'), the block list,
 * app-state changes both ways (a device's patches checked and applied; the phone's announced with
 * server_sync), messages the phone sends (`deviceSentMessage` copies to the linked devices), status
 * posts, and media re-upload when the CDN copy expired. The server (server.ts) hands it the iqs,
 * receipts and messages it answers.
 */

/** A person's profile as the server tells it (the account's own, or a contact's). */
export interface Profile {
  about?: string;
  /** JPEG bytes; served as `pictureUrl`. */
  picture?: Buffer;
  pictureUrl?: string;
  pictureId?: number;
}

/** An app-state patch a linked device sent, as the double applied it. */
export interface DevicePatch {
  account: string;
  device: string;
  collection: string;
  mutations: DecodedMutation[];
}

/** A media re-upload the phone answered. */
export interface MediaRetry {
  id: string;
  from: string;
  newPath: string;
}

const bytes = (node: BinaryNode | undefined): Buffer => (node?.content instanceof Uint8Array ? Buffer.from(node.content) : Buffer.alloc(0));
const userOf = (jid: string): string => jidDecode(jid)?.user ?? jid;
const nowSeconds = (): string => String(Math.floor(Date.now() / 1000));

export class AccountSide {
  /** Profiles by JID user (phone digits or LID digits). */
  private readonly profiles = new Map<string, Profile>();
  /** Blocked LID JIDs per account phone. */
  private readonly blocked = new Map<string, Set<string>>();
  /** Patches the linked devices sent, in order. */
  readonly patches: DevicePatch[] = [];
  /** Status posts (`<message to="status@broadcast">`) the linked devices sent. */
  readonly statusPosts: BinaryNode[] = [];
  /** Media the phone uploaded again (answers to `server-error` receipts). */
  readonly mediaRetries: MediaRetry[] = [];
  /** Picture uploads (`w:profile:picture` set) by account phone, the latest last. */
  readonly pictureUploads: Array<{ account: string; bytes: Buffer | null }> = [];
  /** Media the CDN no longer serves (expire()), kept for the phone's re-upload. */
  private readonly expired = new Map<string, Buffer>();
  private nextPictureId = 1;

  constructor(private readonly double: ProtocolDouble) {}

  // ---- set up by tests ----------------------------------------------------------------------

  /** What the server tells about a contact (or an account): about text and picture. */
  setProfile(who: Contact | Account, profile: { about?: string; picture?: Buffer }): void {
    const users = 'nextDeviceId' in who ? [who.phone, who.lidUser] : [userOf(who.jid), who.lidUser];
    const current = this.profiles.get(users[0]!) ?? {};
    const next: Profile = { ...current, ...(profile.about !== undefined ? { about: profile.about } : {}) };
    if (profile.picture) this.storePicture(next, profile.picture);
    for (const u of users) this.profiles.set(u, next);
  }

  profileOf(jid: string): Profile | undefined {
    return this.profiles.get(userOf(jid));
  }

  /** The account's block list (LID JIDs). */
  blocklistOf(account: Account): string[] {
    return [...(this.blocked.get(account.phone) ?? [])];
  }

  /** The CDN copy of a media file is gone: downloads of `directPath` get 404 until the phone uploads it again. */
  expire(directPath: string): void {
    const stored = this.double.media.blobs.get(directPath);
    if (!stored) throw new Error(`expire: nothing stored at ${directPath}`);
    this.expired.set(directPath, stored.bytes);
    this.double.media.blobs.delete(directPath);
  }

  // ---- the phone ----------------------------------------------------------------------------

  /**
   * The account's phone sends `message` to `to` (a contact's JID): each linked device gets a copy
   * from the phone, `<message from=ACCOUNT recipient=TO>` with `deviceSentMessage`, as WhatsApp
   * delivers what the phone sent. Resolves with the message id.
   */
  async phoneSends(account: Account, to: string, message: proto.IMessage, options: { id?: string; mediatype?: string; name?: string } = {}): Promise<string> {
    const phone = await this.double.phoneOf(account);
    const devices = this.double.devicesOf(account);
    if (devices.length === 0) throw new Error(`${account.phone} has no linked device`);
    // `notify` of the phone's own message is the account's push name (Baileys takes it as its own name).
    const attrs: Record<string, string> = { recipient: to, notify: options.name ?? `Account ${account.phone}` };
    return phone.send(this.double.accountJid(account.phone), { deviceSentMessage: { destinationJid: to, message } }, {
      type: options.mediatype ? 'media' : 'text',
      ...(options.mediatype ? { mediatype: options.mediatype } : {}),
      devices,
      attrs,
      id: options.id ?? newStanzaId(),
    });
  }

  /** A media message from the phone: uploaded like a phone does, then sent as phoneSends does. */
  async phoneSendsMedia(account: Account, to: string, file: Uint8Array, kind: ContactMediaKind, options: { mimetype: string; caption?: string; name?: string }): Promise<string> {
    const phone = await this.double.phoneOf(account);
    const { message } = phone.mediaMessage(file, kind, options);
    return this.phoneSends(account, to, message, { mediatype: kind, ...(options.name ? { name: options.name } : {}) });
  }

  /**
   * A change made on the phone (a label, an archived chat, ...): a new patch on the account's
   * collection, and `<notification type="server_sync">` to every linked device, which then fetches
   * and checks it. Needs account data (accountData), which holds the app-state key.
   */
  phonePatch(account: Account, collection: CollectionName, mutations: Mutation[]): void {
    const world = this.double.worldNow(account);
    if (!world) throw new Error('phonePatch: the account has no app state (start the double with accountData)');
    appendPhonePatch(world.collections[collection], world.key, mutations);
    for (const device of this.double.devicesOf(account)) {
      this.double.deliver(device, {
        tag: 'notification',
        attrs: { from: 's.whatsapp.net', type: 'server_sync', id: newStanzaId(), t: nowSeconds() },
        content: [{ tag: 'collection', attrs: { name: collection, version: String(world.collections[collection].version) } }],
      });
    }
  }

  // ---- what the server answers --------------------------------------------------------------

  /** The iqs of this part (profile pictures, about text, block list, app-state patches); null for others. */
  answerIq(session: Session, node: BinaryNode, result: BinaryNode): BinaryNode | null {
    const xmlns = node.attrs.xmlns;
    const device = session.device;
    if (!device) return null;
    const account = device.account;
    if (xmlns === 'w:profile:picture') return this.answerPicture(account, node, result);
    if (xmlns === 'status' && node.attrs.type === 'set') {
      this.setProfile(account, { about: bytes(getBinaryNodeChild(node, 'status')).toString('utf8') });
      return result;
    }
    if (xmlns === 'blocklist') return this.answerBlocklist(account, node, result);
    // Baileys' sync requests are sets too; a device's change carries `<patch>` in its collection.
    const collections = getBinaryNodeChildren(getBinaryNodeChild(node, 'sync'), 'collection');
    if (xmlns === 'w:sync:app:state' && collections.some((c) => getBinaryNodeChild(c, 'patch'))) return this.acceptPatches(device, node, result);
    return null;
  }

  private storePicture(profile: Profile, picture: Buffer): void {
    const stored = this.double.media.put(picture, 'image');
    profile.picture = picture;
    profile.pictureUrl = stored.url;
    profile.pictureId = this.nextPictureId++;
  }

  private answerPicture(account: Account, node: BinaryNode, result: BinaryNode): BinaryNode {
    if (node.attrs.type === 'get') {
      const profile = this.profileOf(node.attrs.target ?? '');
      if (!profile?.pictureUrl) return { ...result, attrs: { ...result.attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '404', text: 'item-not-found' } }] };
      return { ...result, content: [{ tag: 'picture', attrs: { id: String(profile.pictureId), type: 'image', url: profile.pictureUrl } }] };
    }
    // set: own picture (no target); groups are not this part's.
    if (node.attrs.target) return result;
    const picture = getBinaryNodeChild(node, 'picture');
    const users = [account.phone, account.lidUser];
    const profile = this.profiles.get(account.phone) ?? {};
    if (picture) this.storePicture(profile, bytes(picture));
    else {
      delete profile.picture;
      delete profile.pictureUrl;
      delete profile.pictureId;
    }
    for (const u of users) this.profiles.set(u, profile);
    this.pictureUploads.push({ account: account.phone, bytes: picture ? bytes(picture) : null });
    return result;
  }

  private answerBlocklist(account: Account, node: BinaryNode, result: BinaryNode): BinaryNode {
    const list = this.blocked.get(account.phone) ?? new Set<string>();
    this.blocked.set(account.phone, list);
    if (node.attrs.type === 'set') {
      for (const item of getBinaryNodeChildren(node, 'item')) {
        const jid = item.attrs.jid ?? '';
        if (!jid.endsWith('@lid')) this.double.error(`blocklist set with a non-LID jid ${jid}`);
        if (item.attrs.action === 'block') {
          if (!item.attrs.pn_jid) this.double.error(`block of ${jid} without pn_jid`);
          list.add(jid);
        } else list.delete(jid);
      }
      return result;
    }
    return { ...result, content: [{ tag: 'list', attrs: {}, content: [...list].map((jid) => ({ tag: 'item', attrs: { jid } })) }] };
  }

  /** A device's app-state patches: checked and applied; a bad MAC is an error answer (and a double error). */
  private acceptPatches(device: Device, node: BinaryNode, result: BinaryNode): BinaryNode {
    const world = this.double.worldNow(device.account);
    const collections = getBinaryNodeChildren(getBinaryNodeChild(node, 'sync'), 'collection');
    if (!world) {
      this.double.error(`${device.jid} sent an app-state patch, but its account has no app state`);
      return { ...result, attrs: { ...result.attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }] };
    }
    const served = (device.appState ??= new Map());
    for (const c of collections) {
      const name = c.attrs.name as CollectionName;
      const state = world.collections[name];
      const patch = getBinaryNodeChild(c, 'patch');
      if (!state || !patch) continue;
      try {
        const mutations = acceptDevicePatch(state, world.key, bytes(patch), Number(c.attrs.version ?? '-1'));
        served.set(name, state.version);
        this.patches.push({ account: device.account.phone, device: device.jid, collection: name, mutations });
        this.double.logLine(`${device.jid} patched ${name} to v${state.version}: ${mutations.map((m) => m.index.join('/')).join(', ')}`);
      } catch (err) {
        this.double.error(`${device.jid}'s app-state patch was refused: ${err instanceof Error ? err.message : String(err)}`);
        return { ...result, attrs: { ...result.attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }] };
      }
    }
    return result;
  }

  /** usync `status` protocol: the about text of `jid`. */
  usyncStatus(jid: string): BinaryNode {
    const about = this.profileOf(jid)?.about;
    return about ? { tag: 'status', attrs: { t: nowSeconds() }, content: Buffer.from(about) } : { tag: 'status', attrs: { code: '401' } };
  }

  /**
   * A `server-error` receipt: a device could not download a message's media (the CDN copy is gone)
   * and asks the phone to upload it again. The phone does, and the server tells the device the new
   * path in a `mediaretry` notification, encrypted with the message's media key (HKDF "WhatsApp
   * Media Retry Notification", AES-256-GCM, the message id as additional data).
   */
  answerMediaRetry(device: Device, node: BinaryNode): void {
    const id = node.attrs.id ?? '';
    const rmr = getBinaryNodeChild(node, 'rmr');
    const chat = rmr?.attrs.jid ?? '';
    const author = rmr?.attrs.participant ?? chat;
    const contact = this.double.contactByJid(author);
    const message = contact?.sentMessage(id);
    const media = message?.imageMessage ?? message?.videoMessage ?? message?.audioMessage ?? message?.documentMessage ?? message?.stickerMessage ?? message?.ptvMessage;
    const old = media?.directPath ?? '';
    const kept = this.expired.get(old) ?? this.double.media.blobs.get(old)?.bytes;
    if (!contact || !media?.mediaKey || !kept) {
      this.double.error(`media retry for ${id} from ${chat}: no such media message on the phone`);
      return;
    }
    const stored = this.double.media.put(kept, this.double.media.blobs.get(old)?.kind ?? 'image');
    this.expired.delete(old);
    const plain = proto.MediaRetryNotification.encode({ stanzaId: id, directPath: stored.directPath, result: proto.MediaRetryNotification.ResultType.SUCCESS }).finish();
    const key = Buffer.from(hkdfSync('sha256', media.mediaKey, Buffer.alloc(0), 'WhatsApp Media Retry Notification', 32));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(id));
    const ciphertext = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    this.mediaRetries.push({ id, from: chat, newPath: stored.directPath });
    this.double.deliver(device, {
      tag: 'notification',
      attrs: { from: this.double.accountJid(device.account.phone), type: 'mediaretry', id, t: nowSeconds() },
      content: [
        { tag: 'encrypt', attrs: {}, content: [{ tag: 'enc_p', attrs: {}, content: ciphertext }, { tag: 'enc_iv', attrs: {}, content: iv }] },
        { tag: 'rmr', attrs: { ...rmr?.attrs } },
      ],
    });
  }
}
