import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadConfig } from '../config/load.js';
import type { GatewayConfig } from '../config/schema.js';
import { systemClock } from '../domain/clock.js';
import { errorMessage } from '../domain/errors.js';
import { UNGUARDED } from '../fs/write-guard.js';
import { CreditStore } from '../storage/files/credits.js';
import { InstanceStore } from '../storage/files/instances.js';
import { isInstanceId, storePaths } from '../storage/files/paths.js';
import type { CheckResult } from './types.js';

const MAX_AUX_FILES = 50_000;

/** config.json reads and validates, exactly as `gateway start` would load it. */
export function checkConfig(dataDir: string): { result: CheckResult; config: GatewayConfig | null } {
  try {
    const config = loadConfig(dataDir);
    if (config.serverSecretHash === null) {
      return {
        result: {
          name: 'config',
          status: 'fail',
          message: 'config.json has no serverSecretHash: no server secret can provision instances',
          fix: '`gateway init --force` issues a server secret (every other setting is kept)',
          files: [storePaths(dataDir).config],
        },
        config,
      };
    }
    return { result: { name: 'config', status: 'ok', message: `config.json is valid (host ${config.host}, port ${config.port}, metrics ${config.metrics.mode})` }, config };
  } catch (err) {
    return {
      result: {
        name: 'config',
        status: 'fail',
        message: errorMessage(err),
        fix: 'edit config.json at the key named above (docs/operations.md lists the keys), or restore config.json from a backup; `gateway init --force` rewrites it with defaults and a new server secret',
        files: [storePaths(dataDir).config],
      },
      config: null,
    };
  }
}

/** Every *.json below `dir` (not dot files: those are temp files of an atomic write). */
function walkJson(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (out.length >= MAX_AUX_FILES || e.name.startsWith('.')) continue;
    const path = join(dir, e.name);
    if (e.isDirectory() && !e.name.endsWith('.lock')) walkJson(path, out);
    else if (e.isFile() && e.name.endsWith('.json')) out.push(path);
  }
}

/**
 * The files the daemon refuses to start on (instances.json, credits/*.json) load with the store's
 * own strict readers; other JSON files (credentials, outbox, flows) must at least parse.
 */
export async function checkStore(dataDir: string, trialDays: number): Promise<CheckResult> {
  const paths = storePaths(dataDir);
  const corrupt: { file: string; why: string }[] = [];
  let instances = 0;
  try {
    // Read only: the guard is never asked.
    const store = new InstanceStore(dataDir, systemClock, trialDays, UNGUARDED);
    await store.load();
    instances = store.list().length + store.deleting().length;
  } catch (err) {
    corrupt.push({ file: paths.instances, why: errorMessage(err) });
  }
  const credits = new CreditStore(dataDir, UNGUARDED);
  // credits/<id>.jsonl (the journal) or <id>.json (before the journal; migrated on the next write)
  let creditNames: string[] = [];
  try {
    creditNames = readdirSync(paths.creditsDir).filter((n) => !n.startsWith('.') && /\.jsonl?$/.test(n));
  } catch {
    // no credits yet
  }
  for (const id of new Set(creditNames.map((n) => n.replace(/\.jsonl?$/, '')))) {
    if (!isInstanceId(id)) continue;
    try {
      await credits.read(id);
    } catch (err) {
      const message = errorMessage(err);
      const file = message.startsWith(credits.journalFile(id)) ? credits.journalFile(id) : paths.credits(id);
      corrupt.push({ file, why: message });
    }
  }
  if (corrupt.length > 0) {
    return {
      name: 'store',
      status: 'fail',
      message: corrupt.map((c) => c.why.startsWith(c.file) ? c.why : `${c.file}: ${c.why}`).join('; '),
      fix: 'stop the gateway, restore the named file(s) from a backup (or repair the JSON by hand); the gateway never overwrites a corrupt store file',
      files: corrupt.map((c) => c.file),
    };
  }

  const aux: string[] = [];
  for (const dir of [paths.authDir, paths.outboxDir, paths.flowsDir]) walkJson(dir, aux);
  const unreadable: string[] = [];
  for (const file of aux) {
    try {
      JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      unreadable.push(file);
    }
  }
  const summary = `instances.json and ${creditNames.length} credit file(s) load (${instances} instance(s)); ${aux.length} other JSON file(s) parse`;
  if (unreadable.length > 0) {
    const shown = unreadable.slice(0, 10).map((f) => relative(dataDir, f));
    return {
      name: 'store',
      status: 'warn',
      message: `${unreadable.length} file(s) do not parse: ${shown.join(', ')}${unreadable.length > 10 ? ', ...' : ''}`,
      fix: 'restore them from a backup; a broken auth/ file means that instance must pair again (`gateway pair ID`), a broken outbox/ file is one lost webhook delivery',
      files: unreadable,
    };
  }
  return { name: 'store', status: 'ok', message: summary };
}
