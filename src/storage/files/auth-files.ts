import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { storePaths } from './paths.js';

/** Whether an instance's stored WhatsApp credentials hold a linked account (QR logins set `creds.account`). */
export function isPaired(dataDir: string, id: string): boolean {
  try {
    const doc = JSON.parse(readFileSync(join(storePaths(dataDir).authDir, `${id}.json`), 'utf8')) as { creds?: { account?: unknown } };
    return doc.creds?.account != null;
  } catch {
    return false;
  }
}
