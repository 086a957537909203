import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { storePaths } from './paths.js';

/**
 * Whether a credentials file holds a paired session: its `paired` mark, or (files of versions
 * before the mark) a linked account in its creds (QR logins set `creds.account`), or the sandbox
 * file of those versions.
 */
export function readPairedSync(file: string): boolean {
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { paired?: unknown; sandbox?: unknown; creds?: { account?: unknown } };
    if (typeof doc.paired === 'boolean') return doc.paired;
    return doc.sandbox === true || doc.creds?.account != null;
  } catch {
    return false;
  }
}

/** Whether an instance's stored WhatsApp credentials hold a linked account (the CLI, without a daemon). */
export function isPaired(dataDir: string, id: string): boolean {
  const dir = storePaths(dataDir).authDir;
  return readPairedSync(join(dir, `${id}.json`)) || readPairedSync(join(dir, `${id}.sandbox.json`));
}
