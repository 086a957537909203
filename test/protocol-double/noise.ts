import { aesDecryptGCM, aesEncryptGCM, Curve, hkdf, NOISE_MODE, NOISE_WA_HEADER, sha256, type KeyPair } from '@whiskeysockets/baileys';

const EMPTY = Buffer.alloc(0);

function iv(counter: number): Buffer {
  const out = Buffer.alloc(12);
  out.writeUInt32BE(counter, 8);
  return out;
}

/**
 * The responder side of WhatsApp's Noise XX (Noise_XX_25519_AESGCM_SHA256), the mirror image of
 * Baileys' `makeNoiseHandler` (Utils/noise-handler.js): same hash chaining (every ciphertext is
 * mixed into the hash), one shared counter for handshake encrypt/decrypt reset on every key mix,
 * and transport keys from HKDF(salt, '') where the client writes with the first half.
 */
export class NoiseResponder {
  private hash: Buffer;
  private salt: Buffer;
  private key: Buffer;
  private counter = 0;
  private transport: { enc: Buffer; dec: Buffer; readCounter: number; writeCounter: number } | null = null;

  constructor() {
    const mode = Buffer.from(NOISE_MODE);
    this.hash = mode.byteLength === 32 ? mode : sha256(mode);
    this.salt = this.hash;
    this.key = this.hash;
    this.authenticate(NOISE_WA_HEADER);
  }

  get ready(): boolean {
    return this.transport !== null;
  }

  authenticate(data: Uint8Array): void {
    if (!this.transport) this.hash = sha256(Buffer.concat([this.hash, data]));
  }

  mixIntoKey(data: Uint8Array): void {
    const out = Buffer.from(hkdf(Buffer.from(data), 64, { salt: this.salt, info: '' }));
    this.salt = out.subarray(0, 32);
    this.key = out.subarray(32);
    this.counter = 0;
  }

  private encrypt(plaintext: Uint8Array): Buffer {
    const out = aesEncryptGCM(plaintext, this.key, iv(this.counter++), this.hash);
    this.authenticate(out);
    return out;
  }

  private decrypt(ciphertext: Uint8Array): Buffer {
    const out = aesDecryptGCM(ciphertext, this.key, iv(this.counter++), this.hash);
    this.authenticate(ciphertext);
    return out;
  }

  /**
   * Answers the client hello: returns the serverHello fields (our ephemeral, our static key and
   * the certificate chain, both encrypted).
   */
  serverHello(clientEphemeral: Uint8Array, ephemeral: KeyPair, staticKey: KeyPair, certChain: Uint8Array): { ephemeral: Uint8Array; static: Uint8Array; payload: Uint8Array } {
    this.authenticate(clientEphemeral);
    this.authenticate(ephemeral.public);
    this.mixIntoKey(Curve.sharedKey(ephemeral.private, clientEphemeral));
    const encStatic = this.encrypt(staticKey.public);
    this.mixIntoKey(Curve.sharedKey(staticKey.private, clientEphemeral));
    const payload = this.encrypt(certChain);
    return { ephemeral: ephemeral.public, static: encStatic, payload };
  }

  /** Reads the client finish: returns the client's static (Noise) public key and its payload, then switches to transport mode. */
  clientFinish(encStatic: Uint8Array, encPayload: Uint8Array, ephemeral: KeyPair): { clientStatic: Buffer; payload: Buffer } {
    const clientStatic = this.decrypt(encStatic);
    this.mixIntoKey(Curve.sharedKey(ephemeral.private, clientStatic));
    const payload = this.decrypt(encPayload);
    const out = Buffer.from(hkdf(EMPTY, 64, { salt: this.salt, info: '' }));
    // The client encrypts with the first half (its "write") and decrypts with the second.
    this.transport = { enc: out.subarray(32), dec: out.subarray(0, 32), readCounter: 0, writeCounter: 0 };
    return { clientStatic, payload };
  }

  encryptFrame(plaintext: Uint8Array): Buffer {
    if (!this.transport) throw new Error('noise: not in transport mode');
    return aesEncryptGCM(plaintext, this.transport.enc, iv(this.transport.writeCounter++), EMPTY);
  }

  decryptFrame(ciphertext: Uint8Array): Buffer {
    if (!this.transport) throw new Error('noise: not in transport mode');
    return aesDecryptGCM(ciphertext, this.transport.dec, iv(this.transport.readCounter++), EMPTY);
  }
}

/**
 * Splits the client's byte stream into frames: an intro header first (`WA`,6,3 — or `ED`... with
 * routing info, which the double never hands out), then 3-byte big-endian lengths.
 */
export class FrameReader {
  private buf: Buffer = EMPTY;
  private introSeen = false;

  push(data: Buffer): Buffer[] {
    this.buf = this.buf.length === 0 ? data : Buffer.concat([this.buf, data]);
    if (!this.introSeen) {
      if (this.buf.length < NOISE_WA_HEADER.length) return [];
      const head = this.buf.subarray(0, NOISE_WA_HEADER.length);
      if (!head.equals(NOISE_WA_HEADER)) throw new Error(`unexpected intro header ${head.toString('hex')}`);
      this.buf = this.buf.subarray(NOISE_WA_HEADER.length);
      this.introSeen = true;
    }
    const frames: Buffer[] = [];
    while (this.buf.length >= 3) {
      const size = (this.buf[0]! << 16) | (this.buf[1]! << 8) | this.buf[2]!;
      if (this.buf.length < size + 3) break;
      frames.push(Buffer.from(this.buf.subarray(3, size + 3)));
      this.buf = this.buf.subarray(size + 3);
    }
    return frames;
  }
}

/** A server-to-client frame: 3-byte length and body (the server sends no intro header). */
export function encodeFrame(body: Uint8Array): Buffer {
  const out = Buffer.alloc(3 + body.byteLength);
  out[0] = (body.byteLength >>> 16) & 0xff;
  out[1] = (body.byteLength >>> 8) & 0xff;
  out[2] = body.byteLength & 0xff;
  out.set(body, 3);
  return out;
}
