import { Curve } from '@whiskeysockets/baileys';
import { memoizeVerify } from './verify-cache.js';
import { verifyXEdDSA } from './xeddsa.js';
import { installNativeXEdDSA } from './native-xeddsa.js';

let installed = false;

/**
 * Makes Baileys' signature checks real. Baileys 7.0.0-rc14's `Curve.verify` (lib/Utils/crypto.js)
 * returns true for any well-formed signature, and it is what checks WhatsApp's Noise certificate
 * chain at every login (`processHandshake`, lib/Utils/noise-handler.js: the intermediate against
 * the root key in `WA_CERT_DETAILS`, the leaf against the intermediate) and the account signature
 * at pairing (`configureSuccessfulPairing`). Without this, anyone on the network path could stand
 * in for WhatsApp's server. Baileys' modules share the one exported `Curve` object, so replacing
 * its `verify` here changes the check in all of them.
 *
 * The sound check costs what rc14's already did (it ran the same verification and ignored the
 * answer); accepted inputs are remembered, so the chain, the same at every login to a server, is
 * checked once per process (see verify-cache.ts). Once per process; idempotent.
 */
export function installCurveVerify(): void {
  if (installed) return;
  installed = true;
  // libsignal's checks (this one included) run on OpenSSL instead of curve25519-js (native-xeddsa.ts).
  installNativeXEdDSA();
  Curve.verify = memoizeVerify(verifyXEdDSA);
}
