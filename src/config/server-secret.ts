import { generateServerSecret, hashSecret } from '../domain/secrets.js';
import type { WriteGuard } from '../fs/write-guard.js';
import { loadConfig, saveConfig } from './load.js';

/** The server secret's hashes, read per request: `gateway init --force` replaces it at run time. */
export interface ServerSecret {
  hash(): string | null;
  /** The secret a rotation replaced, accepted until the new one was shown. */
  retiringHash(): string | null;
  /**
   * Generates a new secret and stores its hash in config.json, keeping the old one's as retiring;
   * returns the secret (shown once). Call `shown` once it reached its holder.
   */
  rotate(): Promise<string>;
  /** The new secret was shown (or used): the one it replaced stops now. */
  shown(): Promise<void>;
}

/** The server secret of the files engine: config.json, re-read before each write. */
export function configServerSecret(dataDir: string, initial: { hash: string | null; retiring: string | null }, guard: WriteGuard): ServerSecret {
  let hash = initial.hash;
  let retiring = initial.retiring;
  let retiringNow: Promise<void> | null = null;
  return {
    hash: () => hash,
    retiringHash: () => retiring,
    async rotate() {
      const secret = generateServerSecret();
      // Re-read the file: every other setting stays as the operator left it.
      const config = loadConfig(dataDir);
      const next = hashSecret(secret);
      // Kept: the last secret known to have been shown (after an unconfirmed earlier rotation,
      // still the one that rotation replaced).
      const keep = config.retiringServerSecretHash ?? config.serverSecretHash;
      await saveConfig(dataDir, { ...config, serverSecretHash: next, retiringServerSecretHash: keep }, guard);
      retiring = keep;
      hash = next;
      return secret;
    },
    shown() {
      if (retiring === null) return Promise.resolve();
      // Refused from this moment (the holder has the new one); stored behind. Should the write fail,
      // the old secret works again only after a restart, until the new one is used again.
      retiring = null;
      retiringNow ??= (async () => {
        try {
          const config = loadConfig(dataDir);
          await saveConfig(dataDir, { ...config, retiringServerSecretHash: null }, guard);
        } finally {
          retiringNow = null;
        }
      })();
      return retiringNow;
    },
  };
}
