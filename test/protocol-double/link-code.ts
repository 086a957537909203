import { createCipheriv, createDecipheriv, hkdfSync, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Curve, getBinaryNodeChild, jidDecode, type BinaryNode, type KeyPair } from '@whiskeysockets/baileys';
import { newStanzaId } from './contact.js';
import type { Account, Device } from './phone.js';
import type { LinkOptions, Session } from './server.js';

/**
 * Pairing by link code ("Link with phone number instead"), the phone's and the server's side of
 * what Baileys' `requestPairingCode` starts (lib/Socket/socket.js) and its `link_code_companion_reg`
 * notification handler finishes (lib/Socket/messages-recv.js). Written from the protocol with
 * node:crypto, the way WhatsApp's phone does it:
 *
 * 1. companion_hello (iq from the unpaired companion): the companion's ephemeral X25519 key,
 *    wrapped with its 8-character code (PBKDF2-SHA256, 131072 rounds, of the code with a random
 *    salt; AES-256-CTR): `salt(32) | iv(16) | key(32)`. The server answers with a pairing ref and
 *    puts the request on the account's phone; the code itself never leaves the companion.
 * 2. primary_hello: the person types the code on the phone, which unwraps the companion's key
 *    with it, wraps its own ephemeral key the same way and sends it with its identity key
 *    (the account key) to the companion (`<notification type="link_code_companion_reg">`).
 * 3. companion_finish (iq): the companion's key bundle `salt(32) | iv(12) | AES-256-GCM(companion
 *    identity | primary identity | random(32))`, keyed by HKDF(ephemeral shared secret, salt,
 *    "link_code_pairing_key_bundle_encryption_key"). The server acknowledges it; the phone opens
 *    it. A wrong code gave the two sides different shared secrets: GCM refuses, the phone shows
 *    "Couldn't link device" and the companion hears nothing more.
 * 4. The phone derives the adv secret, HKDF(ephemeral shared | X25519(account key, companion
 *    identity) | random, "adv_secret"), and links the device as after a QR scan (pair-success
 *    HMAC'd with it, then 515).
 */

/** The characters of a link code (Baileys' `bytesToCrockford`, WhatsApp Web's alphabet). */
export const LINK_CODE_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTVWXYZ';
const CODE_RE = new RegExp(`^[${LINK_CODE_ALPHABET}]{8}$`);
const PBKDF2_ROUNDS = 2 << 16;
/** How long the phone keeps a companion hello for its code to be typed (WhatsApp's Android app: 180 s). */
export const LINK_CODE_TTL_MS = 180_000;
const BUNDLE_INFO = 'link_code_pairing_key_bundle_encryption_key';
const S_WHATSAPP_NET = 's.whatsapp.net';

const pbkdf2Async = promisify(pbkdf2);

/** The AES key a link code wraps ephemeral keys with (both sides derive it). */
async function codeKey(code: string, salt: Buffer): Promise<Buffer> {
  return pbkdf2Async(Buffer.from(code), salt, PBKDF2_ROUNDS, 32, 'sha256');
}

/** `salt(32) | iv(16) | AES-256-CTR(key)`, as companion_hello and primary_hello carry an ephemeral key. */
export async function wrapWithCode(code: string, publicKey: Buffer): Promise<Buffer> {
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-ctr', await codeKey(code, salt), iv);
  return Buffer.concat([salt, iv, cipher.update(publicKey), cipher.final()]);
}

/** The inverse of wrapWithCode. CTR has no integrity: a wrong code gives 32 other bytes, not an error. */
export async function unwrapWithCode(code: string, wrapped: Buffer): Promise<Buffer> {
  if (wrapped.length !== 80) throw new Error(`a wrapped ephemeral key is 80 bytes, not ${wrapped.length}`);
  const decipher = createDecipheriv('aes-256-ctr', await codeKey(code, wrapped.subarray(0, 32)), wrapped.subarray(32, 48));
  return Buffer.concat([decipher.update(wrapped.subarray(48, 80)), decipher.final()]);
}

const hkdf = (ikm: Buffer, salt: Buffer, info: string): Buffer => Buffer.from(hkdfSync('sha256', ikm, salt, info, 32));
const bytes = (node: BinaryNode | undefined): Buffer =>
  node?.content instanceof Uint8Array ? Buffer.from(node.content) : typeof node?.content === 'string' ? Buffer.from(node.content) : Buffer.alloc(0);

/** One code typed on the phone for a request. */
export interface LinkCodeAttempt {
  /** What was typed (normalised: no dash, upper case). */
  code: string;
  at: number;
  /** `waiting`: primary_hello sent, companion_finish not yet opened. */
  outcome: 'waiting' | 'linked' | 'failed';
  /** Why it failed, as the phone would log it. */
  reason?: string;
  device?: Device;
}

/** A companion's request to link to an account (its companion_hello), as the account's phone got it. */
export interface LinkCodeRequest {
  /** The account's number, E.164. */
  phone: string;
  account: Account;
  /** The pairing ref the server issued (link_code_pairing_ref). */
  ref: string;
  /** `companion_platform_id` / `companion_platform_display` (e.g. `Chrome (Linux)`): what the phone shows. */
  platformId: string;
  platformDisplay: string;
  /** `should_show_push_notification`: the phone announced the request instead of waiting to be opened. */
  pushNotification: boolean;
  at: number;
  /** `pending`: the code can be typed; `replaced`: a newer request for the account took its place. */
  state: 'pending' | 'linked' | 'replaced';
  attempts: LinkCodeAttempt[];
  /** The registering session that asked. */
  session: Session;
  /** link_code_pairing_wrapped_companion_ephemeral_pub. */
  wrapped: Buffer;
}

/** A companion hello that a code was typed for and whose companion_finish is awaited. */
interface InFlight {
  request: LinkCodeRequest;
  attempt: LinkCodeAttempt;
  /** The phone's ephemeral key for this attempt and the companion key it unwrapped with the typed code. */
  ephemeral: KeyPair;
  companionEphemeral: Buffer;
  options: LinkOptions;
  resolve(device: Device): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/** What link codes need from the double's server. */
export interface LinkCodeWire {
  account(phone?: string): Account;
  registered(phone: string): Account | undefined;
  send(session: Session, node: BinaryNode): void;
  linkSession(session: Session, keys: { noiseKey: Buffer; identityKey: Buffer; advSecret: Buffer }, options: LinkOptions): Promise<Device>;
  error(what: string): void;
  logLine(line: string): void;
}

/** The phone typed a code that does not open the companion's key bundle, or nothing waits for a code. */
export class LinkCodeError extends Error {
  override name = 'LinkCodeError';
}

/** Pairing by link code on the double: the server's answers and the account phones' side. See the top of this file. */
export class LinkCodeOps {
  /** Every companion_hello the double accepted, in order (what the phones were shown). */
  readonly requests: LinkCodeRequest[] = [];
  /** Every companion_hello refused, with why (no phone for the number, a malformed hello). */
  readonly refused: { phone: string; reason: string; at: number }[] = [];
  private readonly inFlight = new Map<string, InFlight>();
  private readonly waiters: { phone: string | undefined; resolve: (r: LinkCodeRequest) => void }[] = [];

  constructor(private readonly wire: LinkCodeWire) {}

  /** The next (or the latest still pending) request for `phone` (digits or E.164; default any). */
  nextRequest(phone?: string, ms = 15_000): Promise<LinkCodeRequest> {
    const digits = phone?.replace(/^\+/, '');
    const pending = this.requests.filter((r) => r.state === 'pending' && (digits === undefined || r.account.phone === digits)).pop();
    if (pending) return Promise.resolve(pending);
    return new Promise((resolve, reject) => {
      const waiter = {
        phone: digits,
        resolve: (r: LinkCodeRequest) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`no link code request for ${phone ?? 'any number'} within ${ms} ms`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  /** `<iq xmlns="md"><link_code_companion_reg stage=…>` from a session. */
  answer(session: Session, node: BinaryNode, result: BinaryNode): BinaryNode {
    const reg = getBinaryNodeChild(node, 'link_code_companion_reg');
    if (reg?.attrs.stage === 'companion_hello') return this.hello(session, reg, result);
    if (reg?.attrs.stage === 'companion_finish') return this.finish(session, reg, result);
    this.wire.error(`link_code_companion_reg with stage ${String(reg?.attrs.stage)}`);
    return badRequest(result);
  }

  /**
   * companion_hello. WhatsApp answers a request it will not route to a phone (no account for the
   * number, a hello that does not match the connection) with `400 bad-request`: WhatsApp Web's
   * parser of this answer knows 400, 403, 429, 452 and 500 only, no 404, and 400 is what clients
   * get for a number they cannot pair (it is also the per-number throttle).
   */
  private hello(session: Session, reg: BinaryNode, result: BinaryNode): BinaryNode {
    const decoded = jidDecode(reg.attrs.jid ?? '');
    const phone = decoded?.user ? `+${decoded.user}` : String(reg.attrs.jid);
    const refuse = (reason: string): BinaryNode => {
      this.refused.push({ phone, reason, at: Date.now() });
      this.wire.logLine(`#${session.id} companion_hello for ${phone} refused: ${reason}`);
      return badRequest(result);
    };
    if (session.kind !== 'registration' || session.device) return refuse('the session is not an unpaired companion');
    if (decoded?.server !== S_WHATSAPP_NET || !decoded.user) return refuse(`jid ${String(reg.attrs.jid)} is not a phone number`);
    const wrapped = bytes(getBinaryNodeChild(reg, 'link_code_pairing_wrapped_companion_ephemeral_pub'));
    if (wrapped.length !== 80) return refuse(`wrapped companion key of ${wrapped.length} bytes`);
    // The companion names the Noise key it connected with; the server knows that one.
    if (!session.clientStatic || !bytes(getBinaryNodeChild(reg, 'companion_server_auth_key_pub')).equals(session.clientStatic)) {
      return refuse('companion_server_auth_key_pub is not the key of this connection');
    }
    const account = this.wire.registered(decoded.user);
    if (!account) return refuse('no WhatsApp account (no phone) for this number');
    for (const r of this.requests) if (r.account === account && r.state === 'pending') r.state = 'replaced';
    const request: LinkCodeRequest = {
      phone,
      account,
      ref: `2@${randomBytes(24).toString('base64')}`,
      platformId: bytes(getBinaryNodeChild(reg, 'companion_platform_id')).toString(),
      platformDisplay: bytes(getBinaryNodeChild(reg, 'companion_platform_display')).toString(),
      pushNotification: reg.attrs.should_show_push_notification === 'true',
      at: Date.now(),
      state: 'pending',
      attempts: [],
      session,
      wrapped,
    };
    this.requests.push(request);
    this.wire.logLine(`#${session.id} companion_hello for ${phone} from ${request.platformDisplay}: ref ${request.ref}`);
    for (const w of [...this.waiters]) {
      if (w.phone === undefined || w.phone === account.phone) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(request);
      }
    }
    result.content = [{ tag: 'link_code_companion_reg', attrs: {}, content: [{ tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) }] }];
    return result;
  }

  /**
   * The person types `code` on the phone of `options.phone` (default the double's account): the
   * phone takes the latest pending request for its number, sends primary_hello and resolves with
   * the device once linked. Rejects (LinkCodeError) when nothing waits for a code, when the code
   * is not 8 characters of the alphabet (the phone's field takes nothing else), or when the
   * companion's key bundle does not open: a wrong code.
   */
  async enter(typed: string, options: LinkOptions & { finishMs?: number } = {}): Promise<Device> {
    const code = typed.replace(/[-\s]/g, '').toUpperCase();
    if (!CODE_RE.test(code)) throw new LinkCodeError(`the phone takes 8 characters of ${LINK_CODE_ALPHABET}, not "${typed}"`);
    const account = this.wire.account(options.phone);
    const request = this.requests.filter((r) => r.account === account && r.state === 'pending').pop();
    if (!request || Date.now() - request.at > LINK_CODE_TTL_MS || !request.session.ready) {
      throw new LinkCodeError(`no device is waiting for a code for +${account.phone} (none asked, it expired or it left)`);
    }
    const attempt: LinkCodeAttempt = { code, at: Date.now(), outcome: 'waiting' };
    request.attempts.push(attempt);
    // The phone cannot tell a wrong code here: CTR unwraps any code to some 32 bytes.
    const companionEphemeral = await unwrapWithCode(code, request.wrapped);
    const ephemeral = Curve.generateKeyPair();
    const wrappedPrimary = await wrapWithCode(code, Buffer.from(ephemeral.public));
    const linked = new Promise<Device>((resolve, reject) => {
      const finishMs = options.finishMs ?? 10_000;
      const timer = setTimeout(() => {
        this.inFlight.delete(request.ref);
        attempt.outcome = 'failed';
        attempt.reason = `no companion_finish within ${finishMs} ms`;
        reject(new LinkCodeError(`the companion did not finish within ${finishMs} ms`));
      }, finishMs);
      this.inFlight.set(request.ref, { request, attempt, ephemeral, companionEphemeral, options: { ...options, phone: account.phone }, resolve, reject, timer });
    });
    // Routed by the server to the companion that asked, as a notification.
    this.wire.send(request.session, {
      tag: 'notification',
      attrs: { from: S_WHATSAPP_NET, type: 'link_code_companion_reg', id: newStanzaId(), t: String(Math.floor(Date.now() / 1000)) },
      content: [
        {
          tag: 'link_code_companion_reg',
          attrs: { stage: 'primary_hello' },
          content: [
            { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) },
            { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary },
            { tag: 'primary_identity_pub', attrs: {}, content: Buffer.from(account.key.public) },
          ],
        },
      ],
    });
    this.wire.logLine(`phone +${account.phone}: code typed for ref ${request.ref}, primary_hello sent`);
    return linked;
  }

  /** companion_finish: acknowledged at once (the server takes the bundle); the phone then opens it. */
  private finish(session: Session, reg: BinaryNode, result: BinaryNode): BinaryNode {
    const ref = bytes(getBinaryNodeChild(reg, 'link_code_pairing_ref')).toString();
    const flight = this.inFlight.get(ref);
    if (!flight || flight.request.session !== session) {
      this.wire.error(`companion_finish from #${session.id} for ref ${ref}, for which no primary_hello was sent`);
      return badRequest(result);
    }
    this.inFlight.delete(ref);
    clearTimeout(flight.timer);
    const bundle = bytes(getBinaryNodeChild(reg, 'link_code_pairing_wrapped_key_bundle'));
    const identity = bytes(getBinaryNodeChild(reg, 'companion_identity_public'));
    // After the acknowledgement is on the wire (the caller sends `result` when this returns).
    setImmediate(() => {
      this.open(flight, bundle, identity)
        .then((device) => flight.resolve(device))
        .catch((err: unknown) => flight.reject(err instanceof Error ? err : new Error(String(err))));
    });
    return result;
  }

  /** The phone opens the key bundle, derives the adv secret and links the device. */
  private async open(flight: InFlight, bundle: Buffer, companionIdentity: Buffer): Promise<Device> {
    const { request, attempt } = flight;
    const fail = (reason: string): never => {
      attempt.outcome = 'failed';
      attempt.reason = reason;
      this.wire.logLine(`phone +${request.account.phone}: couldn't link device (${reason})`);
      throw new LinkCodeError(`couldn't link device: ${reason}`);
    };
    if (bundle.length < 32 + 12 + 16) return fail(`a key bundle of ${bundle.length} bytes`);
    const ephemeralShared = Buffer.from(Curve.sharedKey(flight.ephemeral.private, flight.companionEphemeral));
    let plain: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', hkdf(ephemeralShared, bundle.subarray(0, 32), BUNDLE_INFO), bundle.subarray(32, 44));
      decipher.setAuthTag(bundle.subarray(bundle.length - 16));
      plain = Buffer.concat([decipher.update(bundle.subarray(44, bundle.length - 16)), decipher.final()]);
    } catch {
      return fail('the key bundle does not open: the code typed is not the one the companion showed');
    }
    const primaryIdentity = Buffer.from(request.account.key.public);
    if (plain.length !== 96) return fail(`a key bundle of ${plain.length} bytes inside`);
    if (!plain.subarray(0, 32).equals(companionIdentity)) return fail("the bundle's companion identity is not the one companion_finish names");
    if (!plain.subarray(32, 64).equals(primaryIdentity)) return fail("the bundle's primary identity is not this phone's");
    const identityShared = Buffer.from(Curve.sharedKey(request.account.key.private, companionIdentity));
    const advSecret = hkdf(Buffer.concat([ephemeralShared, identityShared, plain.subarray(64, 96)]), Buffer.alloc(0), 'adv_secret');
    const session = request.session;
    if (!session.clientStatic) return fail('the companion has no Noise key');
    try {
      const device = await this.wire.linkSession(session, { noiseKey: session.clientStatic, identityKey: companionIdentity, advSecret }, flight.options);
      attempt.outcome = 'linked';
      attempt.device = device;
      request.state = 'linked';
      return device;
    } catch (err) {
      return fail(err instanceof Error ? err.message : String(err));
    }
  }
}

function badRequest(result: BinaryNode): BinaryNode {
  return { tag: 'iq', attrs: { ...result.attrs, type: 'error' }, content: [{ tag: 'error', attrs: { code: '400', text: 'bad-request' } }] };
}
