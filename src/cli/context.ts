import { Command, InvalidArgumentError } from 'commander';
import { loadConfig, resolveDataDir } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import { systemClock } from '../domain/clock.js';
import { UserError } from '../domain/errors.js';
import { CreditStore, MAX_CREDITS } from '../store/credits.js';
import { InstanceStore } from '../store/instances.js';

export interface GlobalOptions {
  dataDir?: string;
  json?: boolean;
}

/** What a command works with: the data dir, its validated config and the stores. */
export interface CliContext {
  dataDir: string;
  json: boolean;
  config: GatewayConfig;
  instances: InstanceStore;
  credits: CreditStore;
}

export function globals(cmd: Command): { dataDir: string; json: boolean } {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  return { dataDir: resolveDataDir(opts.dataDir), json: opts.json ?? false };
}

/** Opens the data dir for a command that needs an initialised one. */
export async function openContext(cmd: Command): Promise<CliContext> {
  const { dataDir, json } = globals(cmd);
  const config = loadConfig(dataDir);
  const instances = new InstanceStore(dataDir, systemClock, config.plans.trialDays);
  await instances.load();
  return { dataDir, json, config, instances, credits: new CreditStore(dataDir) };
}

/** Prints one JSON document with --json, else the human text. */
export function output(json: boolean, data: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
}

export function parseCount(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > MAX_CREDITS) throw new InvalidArgumentError(`expected a whole number from 0 to ${MAX_CREDITS}`);
  return Number(value);
}

export function parsePositive(value: string): number {
  const n = parseCount(value);
  if (n === 0) throw new InvalidArgumentError('expected a whole number > 0');
  return n;
}

export function parsePort(value: string): number {
  const n = parseCount(value);
  if (n > 65535) throw new InvalidArgumentError('expected a port from 0 to 65535');
  return n;
}

/** Looks an instance up or fails with exit code 4. */
export function requireInstance(ctx: CliContext, id: string) {
  const record = ctx.instances.get(id);
  if (!record) throw new UserError(`no instance with id ${JSON.stringify(id)}`, 4);
  return record;
}
