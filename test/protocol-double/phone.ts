import { createHmac } from 'node:crypto';
import { verifySignature } from './cert.js';
import { Curve, getBinaryNodeChild, proto, type BinaryNode, type KeyPair } from '@whiskeysockets/baileys';
import type { AccountDataSpec } from './account-data.js';

/** The phone's WhatsApp account: its number, LID and the account key that signs linked devices. */
export interface Account {
  phone: string;
  lidUser: string;
  key: KeyPair;
  nextDeviceId: number;
  /** What the account holds beyond empty (history, app state, groups): see account-data.ts. Null: nothing. */
  data?: AccountDataSpec | null;
}

/** A linked device (a Baileys client) as the double knows it. */
export interface Device {
  /** `PHONE:DEVICE@s.whatsapp.net`, Baileys' `creds.me.id`. */
  jid: string;
  /** `LID:DEVICE@lid`. */
  lid: string;
  /** `PHONE:DEVICE`, how a login's ClientPayload (username, device) finds it. */
  key: string;
  account: Account;
  deviceId: number;
  /** creds.noiseKey.public: logins must use it. */
  noiseKey: Buffer;
  /** creds.signedIdentityKey.public (the Signal identity). */
  identityKey: Buffer;
  registrationId: number;
  signedPreKey: { id: number; public: Buffer; signature: Buffer };
  removed: boolean;
  /**
   * One-time pre-keys Baileys uploaded (id -> the 32-byte public key as a latin1 string), not yet
   * handed out in a bundle. Strings, not Buffers: the sessions bench pairs thousands of devices
   * with 812 each, and a string is one leaf object for the double's collector where a Buffer is
   * three (its process shares the machine's two cores with the daemon it measures).
   */
  preKeys: Map<number, string>;
  /** Pre-key ids handed out in bundles (consumed), in order. */
  usedPreKeys: number[];
  /**
   * Stanzas for this device not yet acknowledged (by `<ack>`, or `<receipt>` for a message):
   * sent at once to a live session, and again, marked `offline`, at the next login.
   */
  outbox: BinaryNode[];
  /** The id of the initial history sync the phone sent this device (once per pairing, after its first login). */
  syncId: string | null;
  /** Every stanza of the initial sync (key share, history syncs, the first group messages), once sent. */
  syncIds?: string[];
  /** Whether every stanza of the initial sync was handed to the device's outbox. */
  syncSent?: boolean;
  /** App-state versions the double served this device, by collection. */
  appState?: Map<string, number>;
}

export interface ParsedQr {
  ref: string;
  noiseKey: Buffer;
  identityKey: Buffer;
  advSecret: Buffer;
  platform: string | undefined;
}

/**
 * Baileys 7 QR data: `https://wa.me/settings/linked_devices#REF,NOISE,IDENTITY,ADV,PLATFORM`
 * (buildPairingQRData); older versions had no URL prefix, which is accepted too.
 */
export function parseQr(qr: string): ParsedQr {
  const data = qr.includes('#') ? qr.slice(qr.indexOf('#') + 1) : qr;
  const [ref, noise, identity, adv, platform] = data.split(',');
  if (!ref || !noise || !identity || !adv) throw new Error(`not a WhatsApp pairing QR: ${qr}`);
  return {
    ref,
    noiseKey: Buffer.from(noise, 'base64'),
    identityKey: Buffer.from(identity, 'base64'),
    advSecret: Buffer.from(adv, 'base64'),
    platform,
  };
}

const ACCOUNT_SIG_PREFIX = Buffer.from([6, 0]);
const DEVICE_SIG_PREFIX = Buffer.from([6, 1]);

/**
 * The pair-success iq the server relays from the phone, built the way configureSuccessfulPairing
 * (Utils/validate-connection.js) verifies it: ADVSignedDeviceIdentityHMAC{details, hmac =
 * HMAC-SHA256(advSecret, details)}, where details is an ADVSignedDeviceIdentity whose
 * accountSignature signs [6,0] + deviceDetails + the client's identity key with the account key.
 */
export function buildPairSuccess(id: string, device: Device, advSecret: Buffer, platform = 'android'): { node: BinaryNode; details: Uint8Array } {
  const details = proto.ADVDeviceIdentity.encode({
    rawId: Number(device.account.phone.slice(-9)),
    timestamp: Math.floor(Date.now() / 1000),
    keyIndex: device.deviceId,
  }).finish();
  const accountSignature = Curve.sign(device.account.key.private, Buffer.concat([ACCOUNT_SIG_PREFIX, details, device.identityKey]));
  const signed = proto.ADVSignedDeviceIdentity.encode({
    details,
    accountSignatureKey: device.account.key.public,
    accountSignature,
  }).finish();
  const hmac = createHmac('sha256', advSecret).update(signed).digest();
  const identity = proto.ADVSignedDeviceIdentityHMAC.encode({ details: signed, hmac }).finish();
  const node: BinaryNode = {
    tag: 'iq',
    attrs: { from: 's.whatsapp.net', type: 'set', id, xmlns: 'md' },
    content: [
      {
        tag: 'pair-success',
        attrs: {},
        content: [
          { tag: 'device-identity', attrs: {}, content: identity },
          { tag: 'platform', attrs: { name: platform } },
          { tag: 'device', attrs: { jid: device.jid, lid: device.lid } },
        ],
      },
    ],
  };
  return { node, details };
}

/**
 * Checks Baileys' answer to pair-success: `<pair-device-sign><device-identity key-index>` holding
 * the ADVSignedDeviceIdentity with the device's own signature over [6,1] + details + identity key
 * + account key (made with the identity key the QR announced).
 */
export function verifyPairDeviceSign(reply: BinaryNode, details: Uint8Array, device: Device): void {
  if (reply.attrs.type !== 'result') throw new Error(`pair-success was answered with type=${reply.attrs.type}`);
  const identityNode = getBinaryNodeChild(getBinaryNodeChild(reply, 'pair-device-sign'), 'device-identity');
  if (!(identityNode?.content instanceof Uint8Array)) throw new Error('pair-device-sign without device-identity');
  if (identityNode.attrs['key-index'] !== String(device.deviceId)) throw new Error(`pair-device-sign key-index ${identityNode.attrs['key-index']}`);
  const signed = proto.ADVSignedDeviceIdentity.decode(identityNode.content);
  if (!signed.details || !Buffer.from(signed.details).equals(Buffer.from(details))) throw new Error('pair-device-sign altered the device details');
  if (!signed.deviceSignature) throw new Error('pair-device-sign without a device signature');
  const message = Buffer.concat([DEVICE_SIG_PREFIX, details, device.identityKey, device.account.key.public]);
  if (!verifySignature(device.identityKey, message, signed.deviceSignature)) throw new Error('pair-device-sign: bad device signature');
}
