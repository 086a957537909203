import test from 'ava';
import { readFile } from 'node:fs/promises';
import { defaultConfig, validateConfig } from '../../src/config/validate.js';

test('config/config.example.json is valid and shows every default', async (t) => {
  const example = JSON.parse(await readFile(new URL('../../config/config.example.json', import.meta.url), 'utf8'));
  t.deepEqual(validateConfig(example), defaultConfig());
  t.deepEqual(example, defaultConfig());
});
