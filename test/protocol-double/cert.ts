import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Curve, proto, type KeyPair } from '@whiskeysockets/baileys';

/**
 * The double's stand-in for WhatsApp's long-term root key ("WhatsAppLongTerm1"). Not a secret: it
 * only signs certificates of a server that listens on loopback in tests. preload.ts installs the
 * public half into Baileys' exported WA_CERT_DETAILS so the client accepts chains signed with it;
 * it is fixed (not generated per run) so a child-process daemon and the test agree on it.
 */
const ROOT = JSON.parse(readFileSync(new URL('./root-key.json', import.meta.url), 'utf8')) as { private: string; public: string; serial: number };

export const TEST_ROOT_KEY: KeyPair = {
  private: Buffer.from(ROOT.private, 'hex'),
  public: Buffer.from(ROOT.public, 'hex'),
};

/**
 * The serial Baileys compares the intermediate's issuerSerial with (WA_CERT_DETAILS.SERIAL; 0 for
 * WhatsApp's root). Deliberately not 0, so that a client without preload.ts refuses the double with
 * its own message (400 "certification match failed") even before any signature is looked at,
 * which proves the preload took effect.
 */
export const TEST_ROOT_SERIAL: number = ROOT.serial;

/**
 * How the double's certificate chain is made (ProtocolDouble option `certChain`), to test what a
 * client refuses. By default the chain is sound and signed by the test root.
 */
export interface CertChainOptions {
  /** Signs the intermediate (default TEST_ROOT_KEY). */
  root?: KeyPair;
  /** The intermediate's issuerSerial (default TEST_ROOT_SERIAL). */
  rootSerial?: number;
  /** Flips one bit of that certificate's signature after signing: the rest of the chain stays sound. */
  tamper?: 'leaf-signature' | 'intermediate-signature';
}

/**
 * A `proto.CertChain` as `makeNoiseHandler().processHandshake` checks it: the intermediate's details
 * signed by the root key (with issuerSerial = the root serial), the leaf's details signed by the
 * intermediate key. The leaf certifies the server's static Noise key.
 */
export function makeCertChain(serverStaticPublic: Uint8Array, options: CertChainOptions = {}): Uint8Array {
  const { root = TEST_ROOT_KEY, rootSerial = TEST_ROOT_SERIAL, tamper } = options;
  const intermediateKey = Curve.generateKeyPair();
  const now = Math.floor(Date.now() / 1000);
  const intermediateDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 1,
    issuerSerial: rootSerial,
    key: intermediateKey.public,
    notBefore: now - 3600,
    notAfter: now + 86_400,
  }).finish();
  const leafDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: serverStaticPublic,
    notBefore: now - 3600,
    notAfter: now + 86_400,
  }).finish();
  const intermediateSignature = Buffer.from(Curve.sign(root.private, intermediateDetails));
  const leafSignature = Buffer.from(Curve.sign(intermediateKey.private, leafDetails));
  // Byte 0 is part of R (the signature's first half): any change there makes it a wrong signature
  // that is still well-formed (64 bytes), which is what rc14's Curve.verify let through.
  if (tamper === 'leaf-signature') leafSignature[0]! ^= 1;
  if (tamper === 'intermediate-signature') intermediateSignature[0]! ^= 1;
  return proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: intermediateSignature },
    leaf: { details: leafDetails, signature: leafSignature },
  }).finish();
}

const requireCjs = createRequire(import.meta.url);
const libsignalCurve = requireCjs('libsignal/src/curve.js') as { verifySignature(pubKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean };

/**
 * A sound XEdDSA signature check, the double's own. Baileys 7.0.0-rc14's `Curve.verify` is not one:
 * it returns true unless libsignal's verifySignature throws, but that only throws on malformed
 * input and returns false for a wrong signature, so any well-formed signature passes. The gateway
 * replaces it (src/connection/baileys/curve-verify.ts); the double checks Baileys' signatures with
 * this, which does not depend on that.
 */
export function verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = publicKey.length === 33 ? publicKey : Buffer.concat([Buffer.from([5]), publicKey]);
    return libsignalCurve.verifySignature(key, message, signature) === true;
  } catch {
    return false;
  }
}
