import type { Command } from 'commander';
import { pino } from 'pino';
import { generateClusterSecret } from '../../cluster/gateway-record.js';
import { COUNT_NAMES, type KindCounts } from '../../storage/migrate/counts.js';
import type { MigrationReport, ProgressEvent } from '../../storage/migrate/run.js';
import { globals, outputFlushed } from '../context.js';

function progressLine(e: ProgressEvent): string {
  switch (e.kind) {
    case 'start':
      return e.resumed ? `Resuming the interrupted migration (run ${e.run}): ${e.instances} instances\n` : `Migrating ${e.instances} instances\n`;
    case 'gateway': {
      const what = Object.values(e.copied).join(', ');
      const earlier = e.earlier.length > 0 ? ` (copied by an earlier run: ${e.earlier.join(', ')})` : '';
      return `gateway-wide: ${what || 'nothing left to copy'}${earlier}\n`;
    }
    case 'instance': {
      const what = Object.values(e.copied).join(', ');
      const earlier = e.earlier.length > 0 ? ` (copied by an earlier run: ${e.earlier.join(', ')})` : '';
      return `instance ${e.index}/${e.of} ${e.instanceId}: ${what || 'nothing left to copy'}${earlier}\n`;
    }
    case 'checked':
      return `checked: the files and the database hold the same counts for each of the ${e.instances} instances, per kind\n`;
  }
}

function totals(report: MigrationReport): KindCounts {
  const sum = Object.fromEntries(Object.keys(COUNT_NAMES).map((k) => [k, 0])) as unknown as KindCounts;
  for (const { counts } of report.instances) for (const k of Object.keys(sum) as Array<keyof KindCounts>) sum[k] += counts[k];
  return sum;
}

/** What to run next, with the target named as it was given (its password masked). */
function nextSteps(report: MigrationReport): { firstNode: string; otherNodes: string; config: string } {
  return {
    firstNode: `gateway init --data-dir ${report.dataDir} --database '${report.database}' --force --cluster-secret ${report.clusterSecret}`,
    otherNodes: `gateway init --data-dir DIR --database '${report.database}' --cluster-secret ${report.clusterSecret} [--node-id ID] [--advertise-url http://HOST:PORT]`,
    config: 'or set storage.postgres.url (env GATEWAY_DATABASE_URL) and cluster.secret (env GATEWAY_CLUSTER_SECRET) in config.json',
  };
}

function humanText(report: MigrationReport): string {
  const next = nextSteps(report);
  const lines: string[] = [];
  if (report.completedBefore) {
    lines.push(`The migration of ${report.dataDir} into ${report.database} had completed; its cluster secret was never shown.`);
  } else {
    const t = totals(report);
    lines.push(
      `Copied ${report.dataDir} into ${report.database}${report.resumed ? ' (an interrupted migration resumed)' : ''}.`,
      `Checked per instance and kind: ${report.instances.length} instances, ${report.owners} owners' trial records, ${report.operators} operators, ${report.auditEntries} audit log entries,`,
      `  ${t.messages} messages, ${t.media} media files (${t.mediaBytes} bytes), ${t.authCreds} WhatsApp sessions (${t.authTables} key tables), ${t.balance} credits (${t.spent} spent),`,
      `  ${t.flow} flows, ${t.handovers} open handovers, ${t.conversations} conversation positions, ${t.deliveries} webhook deliveries (${t.pendingDeliveries} pending),`,
      `  ${t.usageDays} days of usage (${t.usageSent} messages sent): the same in the files and in the database.`,
    );
  }
  lines.push(
    'The gateway is created in the database with this data dir\'s server secret (the same X-API-Secret works), its plans and webhook policy; operators sign in with the passwords they had.',
    '',
    `Cluster secret (nodes join with it; shown once, store it now): ${report.clusterSecret}`,
    '',
    'Next:',
    '  1. Stop using the files of this data dir as a gateway (its phones now belong to the database\'s nodes).',
    '     It can become the first node (its files stay as they are, a backup):',
    `       ${next.firstNode}`,
    `     (${next.config})`,
    '  2. Each other node, on its host:',
    `       ${next.otherNodes}`,
    '  3. `gateway start` on each node: instances log in from their stored sessions (no QR), pending webhooks are delivered.',
  );
  if (report.database.includes(':****@')) lines.push('(The database password is shown as ****: put it back into the URL.)');
  return lines.join('\n');
}

export function registerStorage(program: Command): void {
  const storage = program.command('storage').description('where the gateway keeps its state');
  storage
    .command('migrate')
    .description('copy this files data dir into an empty PostgreSQL database and create the gateway there (phones stay paired); run it again to resume after an interruption')
    .requiredOption('--to <url>', 'postgres://user:password@host:5432/database: an empty database (create it first)')
    .action(async (opts: { to: string }, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const logger = pino({ level: 'warn', base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }));
      // pg loads only for this command (see storage/open.ts).
      const { migrateDataDir } = await import('../../storage/migrate/run.js');
      await migrateDataDir({
        dataDir,
        url: opts.to,
        clusterSecret: generateClusterSecret(),
        logger,
        onProgress: (e) => process.stderr.write(progressLine(e)),
        announce: (report) =>
          outputFlushed(
            json,
            { ...report, totals: report.completedBefore ? null : totals(report), next: nextSteps(report) },
            humanText(report),
          ),
      });
    });
}
