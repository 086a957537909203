import { defaultConfig } from '../config/validate.js';
import { checkBaileysPatch } from './baileys-patch.js';
import { checkNodeVersion } from './node-version.js';
import { checkDataDirExists, checkPermissions } from './permissions.js';
import { checkPort } from './port.js';
import { checkWhatsApp } from './whatsapp.js';
import { withEnvironment } from '../config/load.js';
import { checkConfig, checkStore } from './store.js';
import type { CheckResult, DoctorReport } from './types.js';

export type { CheckResult, CheckStatus, DoctorReport } from './types.js';

const skipped = (name: string, why: string): CheckResult => ({ name, status: 'skip', message: `skipped: ${why}` });

/**
 * Checks an installation: Node version, Baileys' patch, the data dir (exists, 0700/0600, one owner), config
 * validity, store integrity, whether the daemon can listen and whether WhatsApp can be reached. Reads only; never writes.
 */
export async function runDoctor(dataDir: string, options: { nodeVersion?: string } = {}): Promise<DoctorReport> {
  const checks: CheckResult[] = [checkNodeVersion(options.nodeVersion), checkBaileysPatch()];
  const dir = checkDataDirExists(dataDir);
  checks.push(dir);
  if (dir.status !== 'ok') {
    for (const name of ['permissions', 'config', 'store', 'port', 'whatsapp', 'database']) checks.push(skipped(name, 'the data dir is not usable'));
  } else {
    checks.push(checkPermissions(dataDir));
    const { result, config } = checkConfig(dataDir);
    checks.push(result);
    checks.push(await checkStore(dataDir, (config ?? defaultConfig()).plans.trialDays));
    checks.push(config ? await checkPort(dataDir, config.host, config.port) : skipped('port', 'config.json is not valid'));
    checks.push(config ? await checkWhatsApp(config.baileys.webSocketUrl) : skipped('whatsapp', 'config.json is not valid'));
    // pg loads only for this check (see storage/open.ts).
    checks.push(config ? await (await import('./database.js')).checkDatabase(withEnvironment(config).storage.postgres.url) : skipped('database', 'config.json is not valid'));
  }
  return { ok: checks.every((c) => c.status !== 'fail'), dataDir, checks };
}

/** The report as text for a terminal: one line per check, then what to fix. */
export function formatReport(report: DoctorReport): string {
  const label: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'WARN', fail: 'FAIL', skip: 'skip' };
  const lines = [`gateway doctor: ${report.dataDir}`];
  for (const c of report.checks) {
    lines.push(`  ${label[c.status]}  ${c.name.padEnd(11)} ${c.message}`);
    if (c.fix && (c.status === 'fail' || c.status === 'warn')) lines.push(`        ${' '.repeat(11)} fix: ${c.fix}`);
  }
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  const warned = report.checks.filter((c) => c.status === 'warn').length;
  lines.push(failed === 0 ? `All checks passed${warned > 0 ? ` (${warned} warning${warned > 1 ? 's' : ''})` : ''}.` : `${failed} check(s) failed.`);
  return lines.join('\n');
}
