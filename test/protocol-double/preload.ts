/**
 * Makes Baileys trust the protocol double: installs the double's test root public key into
 * Baileys' exported WA_CERT_DETAILS, which makeNoiseHandler reads when it checks the server's
 * certificate chain. Test-only; product code never imports this.
 *
 * In-process: `import './preload.js'` before any socket connects.
 * Child process (the built bin/gateway): preload-child.mjs, the same in plain JavaScript, through
 * NODE_OPTIONS (see childPreloadEnv() in ./index.ts).
 */
import { WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import { TEST_ROOT_KEY, TEST_ROOT_SERIAL } from './cert.js';

WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from(TEST_ROOT_KEY.public);
WA_CERT_DETAILS.SERIAL = TEST_ROOT_SERIAL;
