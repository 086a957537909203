import type { Command } from 'commander';
import { formatReport, runDoctor } from '../../doctor/index.js';
import { globals, output } from '../context.js';

/** `gateway doctor [--json]`: checks the installation; exit 0 when every check passes, 1 otherwise. */
export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check Node version, data dir permissions, config, store integrity and port; says what to fix')
    .action(async (_opts: unknown, cmd: Command) => {
      const { dataDir, json } = globals(cmd);
      const report = await runDoctor(dataDir);
      output(json, report, formatReport(report));
      if (!report.ok) process.exitCode = 1;
    });
}
