/**
 * Guards: "docs that match behaviour". README.md names every route the daemon serves (as its
 * OpenAPI document lists them), every config key of the config schema, and every error code of the
 * error table; config/config.example.json holds every key at its default.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { TSchema } from 'typebox';
import { ConfigSchema } from '../../src/config/schema.js';
import { defaultConfig } from '../../src/config/validate.js';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { startTestDaemon } from '../helpers/daemon.js';

const ROOT = new URL('../../', import.meta.url);
const readme = (): Promise<string> => readFile(fileURLToPath(new URL('README.md', ROOT)), 'utf8');

function configKeys(schema: TSchema, prefix = ''): string[] {
  const properties = (schema as { properties?: Record<string, TSchema & { type?: unknown; properties?: unknown }> }).properties ?? {};
  return Object.entries(properties).flatMap(([key, value]) => (value.type === 'object' && value.properties ? configKeys(value, `${prefix}${key}.`) : [`${prefix}${key}`]));
}

function jsonKeys(value: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(value).flatMap(([key, v]) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? jsonKeys(v as Record<string, unknown>, `${prefix}${key}.`) : [`${prefix}${key}`]));
}

test('README names every route of the OpenAPI document', async (t) => {
  const d = await startTestDaemon();
  t.teardown(() => d.close());
  const doc = (await d.request('GET', '/openapi.json')).body as { paths: Record<string, unknown> };
  const text = await readme();
  const missing = Object.keys(doc.paths).filter((path) => !text.includes(path));
  t.deepEqual(missing, [], `routes missing from README.md: ${missing.join(', ')}`);
});

test('README names every config key, and the example config holds every key at its default', async (t) => {
  const text = await readme();
  const keys = configKeys(ConfigSchema);
  t.true(keys.length > 30);
  const missing = keys.filter((k) => !text.includes(`\`${k}\``));
  t.deepEqual(missing, [], `config keys missing from README.md: ${missing.join(', ')}`);
  const example = JSON.parse(await readFile(fileURLToPath(new URL('config/config.example.json', ROOT)), 'utf8')) as Record<string, unknown>;
  const exampleKeys = jsonKeys(example);
  t.deepEqual([...exampleKeys].sort(), [...keys].sort());
  t.deepEqual(example, JSON.parse(JSON.stringify(defaultConfig())) as unknown, 'every key at its default');
});

test('README lists every error code of the error table', async (t) => {
  const text = await readme();
  const missing = ERROR_CODES.filter((code) => !text.includes(`\`${code}\``));
  t.deepEqual(missing, [], `error codes missing from README.md: ${missing.join(', ')}`);
});
