import { type Command, InvalidArgumentError } from 'commander';
import { resolveDataDir } from '../config/load.js';
import { isE164 } from '../domain/phone.js';
import { MAX_CREDITS, MAX_PREMIUM_DAYS } from '../domain/limits.js';

export interface GlobalOptions {
  dataDir?: string;
  json?: boolean;
}

export function globals(cmd: Command): { dataDir: string; json: boolean } {
  const opts = cmd.optsWithGlobals<GlobalOptions>();
  return { dataDir: resolveDataDir(opts.dataDir), json: opts.json ?? false };
}

/** Prints one JSON document with --json, else the human text. */
export function output(json: boolean, data: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`);
}

/** `output`, resolving once the text left this process (a credential shown once must really be shown). */
export function outputFlushed(json: boolean, data: unknown, human: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(json ? `${JSON.stringify(data, null, 2)}\n` : `${human}\n`, (err) => (err ? reject(err) : resolve()));
  });
}

function whole(value: string, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) > max) throw new InvalidArgumentError(`expected a whole number from 0 to ${max}`);
  return Number(value);
}

export const MAX_COUNT = MAX_CREDITS;

export function parseCount(value: string): number {
  return whole(value, MAX_COUNT);
}

export function parsePositive(value: string): number {
  const n = whole(value, MAX_COUNT);
  if (n === 0) throw new InvalidArgumentError('expected a whole number > 0');
  return n;
}

/** Premium days: at most 36,500 (about 100 years) in one grant. */
export function parseDays(value: string): number {
  const n = whole(value, MAX_PREMIUM_DAYS);
  if (n === 0) throw new InvalidArgumentError(`expected a whole number of days from 1 to ${MAX_PREMIUM_DAYS}`);
  return n;
}

export function parsePort(value: string): number {
  return whole(value, 65535);
}

export function parsePhone(value: string): string {
  if (!isE164(value)) throw new InvalidArgumentError('expected an E.164 number like +15551234567');
  return value;
}
