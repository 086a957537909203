/**
 * Guards issue 12, "OpenAPI: Redocly's recommended lint fails": the served /openapi.json passes
 * `redocly lint` (recommended rules, redocly.yaml) with no error. Runs the pinned @redocly/cli.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('redocly lint finds no error in the served OpenAPI document', async (t) => {
  t.timeout(120_000);
  const d = await startTestDaemon();
  const doc = await d.request('GET', '/openapi.json');
  await d.close();
  t.is(doc.status, 200);
  const dir = await tempDir('gw-lint-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(doc.body));
  const child = spawn(join(ROOT, 'node_modules/.bin/redocly'), ['lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format=json'], {
    cwd: dir,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const report = JSON.parse(out) as { totals: { errors: number; warnings: number }; problems: Array<{ severity: string; ruleId: string; message: string; location?: Array<{ pointer?: string }> }> };
  const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer ?? '?'}`);
  t.deepEqual(errors, [], err);
  t.is(report.totals.errors, 0);
  t.is(code, 0, err);
  t.log(`${report.totals.warnings} warning(s)`);
});
