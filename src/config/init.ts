import { chmod } from 'node:fs/promises';
import type { GatewayConfig } from './schema.js';
import { isInitialised, loadConfig, saveConfig } from './load.js';
import { defaultConfig, validateConfig } from './validate.js';
import { GatewayError } from '../domain/errors.js';
import { ensureDir, type WriteGuard } from '../fs/atomic-write.js';
import { generateServerSecret, hashSecret } from '../domain/secrets.js';

export interface InitAnswers {
  host?: string;
  port?: number;
  allowPrivateTargets?: boolean;
}

/** Refuses to initialise twice unless forced. */
export function assertNotInitialised(dataDir: string, force: boolean): void {
  if (isInitialised(dataDir) && !force) {
    throw new GatewayError(
      'CONFLICT',
      `${dataDir} is already initialised (config.json exists); nothing to do. \`gateway init --force\` issues a new server secret (every other setting and the instances are kept)`,
    );
  }
}

/**
 * First-time set-up of a data dir: a 0700 dir, a config with defaults and the answers, and a new
 * server secret of which only the hash is stored. With `force` on an initialised dir: a new server
 * secret, and only the settings given as answers change. Returns the secret to show once.
 */
export async function initialiseDataDir(dataDir: string, answers: InitAnswers, force: boolean, guard: WriteGuard): Promise<{ config: GatewayConfig; serverSecret: string; shown: () => Promise<void> }> {
  assertNotInitialised(dataDir, force);
  await ensureDir(dataDir);
  await chmod(dataDir, 0o700);
  const serverSecret = generateServerSecret();
  const base = isInitialised(dataDir) ? loadConfig(dataDir) : defaultConfig();
  const config = validateConfig({
    ...base,
    host: answers.host ?? base.host,
    port: answers.port ?? base.port,
    serverSecretHash: hashSecret(serverSecret),
    // The old secret (init --force) keeps working until the new one was shown: a kill between the
    // write and the print must not leave the operator with no secret at all.
    retiringServerSecretHash: base.retiringServerSecretHash ?? base.serverSecretHash,
    webhooks: { ...base.webhooks, allowPrivateTargets: answers.allowPrivateTargets ?? base.webhooks.allowPrivateTargets },
  });
  await saveConfig(dataDir, config, guard);
  const shown = async (): Promise<void> => {
    if (config.retiringServerSecretHash == null) return;
    const now = loadConfig(dataDir);
    if (now.serverSecretHash === config.serverSecretHash) await saveConfig(dataDir, { ...now, retiringServerSecretHash: null }, guard);
  };
  return { config, serverSecret, shown };
}
