import { chmod } from 'node:fs/promises';
import { defaultConfig, type GatewayConfig } from '../config/schema.js';
import { isInitialised, saveConfig } from '../config/load.js';
import { validateConfig } from '../config/validate.js';
import { UserError } from '../domain/errors.js';
import { ensureDir } from '../store/atomic-write.js';
import { generateServerSecret, hashSecret } from '../store/secrets.js';

export interface InitAnswers {
  host?: string;
  port?: number;
  allowPrivateTargets?: boolean;
}

/**
 * First-time set-up of a data dir: a 0700 dir, a config with defaults and the answers, and a new
 * server secret of which only the hash is stored. Returns the secret to show once.
 */
/** Refuses to initialise twice unless forced. */
export function assertNotInitialised(dataDir: string, force: boolean): void {
  if (isInitialised(dataDir) && !force) {
    throw new UserError(`${dataDir} is already initialised (config.json exists); use --force to re-initialise (a new server secret replaces the old one; instances are kept)`);
  }
}

export async function initialiseDataDir(dataDir: string, answers: InitAnswers, force = false): Promise<{ config: GatewayConfig; serverSecret: string }> {
  assertNotInitialised(dataDir, force);
  await ensureDir(dataDir);
  await chmod(dataDir, 0o700);
  const serverSecret = generateServerSecret();
  const base = defaultConfig();
  const config = validateConfig({
    ...base,
    host: answers.host ?? base.host,
    port: answers.port ?? base.port,
    serverSecretHash: hashSecret(serverSecret),
    webhooks: { ...base.webhooks, allowPrivateTargets: answers.allowPrivateTargets ?? base.webhooks.allowPrivateTargets },
  });
  await saveConfig(dataDir, config);
  return { config, serverSecret };
}
