import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../domain/errors.js';
import type { CheckResult } from './types.js';

/** What the gateway's patch of Baileys (patches/, applied by `npm ci` through patch-package) adds. */
export const PATCH_MARK = "Symbol.for('wa-gateway.pauseIfLong')";

/** The file of the installed Baileys that the patch changes. */
export function patchedBaileysFile(): string {
  // The package's entry is lib/index.js; the patched module sits beside it.
  return join(dirname(fileURLToPath(import.meta.resolve('@whiskeysockets/baileys'))), 'Utils', 'chat-utils.js');
}

/**
 * Whether the installed Baileys carries the gateway's patch: without it the gateway works, but a
 * first login decodes the account's app state in one turn of the event loop (40 to 60 ms a
 * realistic account, every other instance waiting; README, "Dependencies").
 */
export function checkBaileysPatch(file: string = patchedBaileysFile()): CheckResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { name: 'baileys', status: 'warn', message: `cannot read Baileys' ${file}: ${errorMessage(err)}`, fix: 'reinstall: npm ci' };
  }
  if (text.includes(PATCH_MARK)) return { name: 'baileys', status: 'ok', message: "Baileys carries the gateway's patch (app-state decoding in time slices)" };
  return {
    name: 'baileys',
    status: 'warn',
    message: "Baileys was installed without the gateway's patch (npm ci --ignore-scripts?): a first login's app-state decoding holds the event loop for tens of ms",
    fix: 'in the install directory: npx patch-package (or npm ci without --ignore-scripts)',
    files: [file],
  };
}
