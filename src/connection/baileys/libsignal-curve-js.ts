import { requireFromBaileys } from './from-baileys.js';

/** What libsignal calls on curve25519-js at each signature it makes or checks. */
export interface LibsignalCurveJs {
  sign(secretKey: Uint8Array, message: Uint8Array, random?: Uint8Array): Uint8Array;
  verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

/**
 * The copy of curve25519-js that libsignal loads, found from where Baileys resolves libsignal:
 * libsignal reads `sign` and `verify` from this object at each call, so replacing them here
 * changes every caller in the process (curve-sign.ts, native-xeddsa.ts).
 */
export function libsignalCurveJs(): LibsignalCurveJs {
  const curveJs = requireFromBaileys('curve25519-js', 'libsignal/src/curve.js') as Partial<LibsignalCurveJs>;
  if (typeof curveJs.sign !== 'function' || typeof curveJs.verify !== 'function') throw new Error('curve25519-js has no sign or verify');
  return curveJs as LibsignalCurveJs;
}
