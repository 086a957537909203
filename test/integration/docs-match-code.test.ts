/**
 * Guards issue 21 item 19, "docs that disagree with the code":
 * - docs/operations.md's doctor table lists every check `gateway doctor` runs (it lacked `whatsapp`);
 * - docs/flows.md documents every body field of the handover release route (it said `{"phone"}`
 *   only; the route takes `{"chatId"}` too);
 * - the README walk-through hard-codes no `whsec_` secret for readers to copy;
 * - the walk-through's data dir is in .gitignore;
 * - there is a LICENSE, and it is the license the OpenAPI document names;
 * - CHANGELOG.md has an entry for this version, and the upgrade steps point to it.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runDoctor } from '../../src/doctor/index.js';
import { startTestDaemon, tempDir } from '../helpers/daemon.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): Promise<string> => readFile(join(ROOT, path), 'utf8');

test('the doctor table in docs/operations.md lists every check', async (t) => {
  // A missing data dir: every check is reported (most as skipped), and nothing touches the network.
  const report = await runDoctor(join(await tempDir(), 'missing'));
  const names = report.checks.map((c) => c.name);
  t.true(names.includes('whatsapp'));
  const ops = await read('docs/operations.md');
  const table = ops.slice(ops.indexOf('## gateway doctor'));
  t.deepEqual(names.filter((n) => !table.includes(`| \`${n}\` |`)), []);
});

test('docs/flows.md documents every body field of POST /api/{id}/handover/release', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const doc = (await d.request('GET', '/openapi.json')).body as {
    paths: Record<string, { post?: { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } } }>;
  };
  const fields = Object.keys(doc.paths['/api/{id}/handover/release']?.post?.requestBody?.content['application/json']?.schema.properties ?? {});
  t.deepEqual([...fields].sort(), ['chatId', 'phone']);
  const row = (await read('docs/flows.md')).split('\n').find((l) => l.startsWith('| `POST /api/{id}/handover/release`')) ?? '';
  t.deepEqual(fields.filter((f) => !row.includes(`{"${f}"}`)), [], row);
});

test('the README walk-through holds no secret to copy, and its data dir is ignored by git', async (t) => {
  const readme = await read('README.md');
  const block = /<!-- walkthrough:start -->([\s\S]*?)<!-- walkthrough:end -->/.exec(readme)?.[1] ?? '';
  t.true(block.length > 500);
  t.notRegex(block, /whsec_[A-Za-z0-9+/=]{8,}/);
  t.regex(block, /--secret generate/);
  const dataDir = /GATEWAY_DATA_DIR=\$PWD\/([\w-]+)/.exec(block)?.[1];
  t.truthy(dataDir);
  t.true((await read('.gitignore')).split('\n').includes(`${dataDir}/`), `${dataDir}/ in .gitignore`);
});

test('LICENSE is the license the OpenAPI document names', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const info = ((await d.request('GET', '/openapi.json')).body as { info: { license: { identifier: string } } }).info;
  t.is(info.license.identifier, 'MIT');
  const license = await read('LICENSE');
  t.regex(license, /^MIT License\n/);
  t.regex(license, /Permission is hereby granted, free of charge/);
});

test('CHANGELOG.md has an entry for this version, and the upgrade steps point to it', async (t) => {
  const { version } = JSON.parse(await read('package.json')) as { version: string };
  t.regex(await read('CHANGELOG.md'), new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm'));
  const ops = await read('docs/operations.md');
  const upgrade = ops.slice(ops.indexOf('## Upgrade'), ops.indexOf('## Security model'));
  t.regex(upgrade, /CHANGELOG\.md/);
});
