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
 * WhatsApp's root). Deliberately not 0: Baileys rc14's signature checks pass anything (see
 * verifySignature below), so this serial is what makes a client without preload.ts refuse the
 * double (400 "certification match failed") and proves the preload took effect.
 */
export const TEST_ROOT_SERIAL: number = ROOT.serial;

/**
 * A `proto.CertChain` as `makeNoiseHandler().processHandshake` checks it: the intermediate's details
 * signed by the root key (with issuerSerial = the root serial), the leaf's details signed by the
 * intermediate key. The leaf certifies the server's static Noise key.
 */
export function makeCertChain(serverStaticPublic: Uint8Array, root: KeyPair = TEST_ROOT_KEY, rootSerial = TEST_ROOT_SERIAL): Uint8Array {
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
  return proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediateKey.private, leafDetails) },
  }).finish();
}

const requireCjs = createRequire(import.meta.url);
const libsignalCurve = requireCjs('libsignal/src/curve.js') as { verifySignature(pubKey: Uint8Array, msg: Uint8Array, sig: Uint8Array): boolean };

/**
 * A sound XEdDSA signature check. Baileys 7.0.0-rc14's `Curve.verify` is not one: it returns true
 * unless libsignal's verifySignature throws, but that only throws on malformed input and returns
 * false for a wrong signature, so any well-formed signature passes. The double checks Baileys'
 * signatures with this instead.
 */
export function verifySignature(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    const key = publicKey.length === 33 ? publicKey : Buffer.concat([Buffer.from([5]), publicKey]);
    return libsignalCurve.verifySignature(key, message, signature) === true;
  } catch {
    return false;
  }
}
