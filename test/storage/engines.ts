/**
 * The storage engines the contract tests run against: one list, so every port's contract is one
 * test file run on each engine (never a copy per engine). A location is a fresh, empty place for
 * one engine's state (a temp data dir; a fresh database); `open` may be called again on it to
 * reopen what an earlier `open` (or a killed child process, see crash.ts) left there.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Storage, StorageEngine } from '../../src/storage/storage.js';
import pg from 'pg';
import { storePaths } from '../../src/storage/files/paths.js';
import { freshDatabase } from '../helpers/postgres.js';
import { openAt, type OpenOptions } from './open.js';

export { openAt, testConfig, type ConfigPatch, type OpenOptions } from './open.js';

export interface StorageLocation {
  readonly engine: StorageEngine;
  /** What a child process needs to open the same storage (see crash.ts). */
  readonly address: string;
  open(options?: OpenOptions): Promise<Storage>;
  destroy(): Promise<void>;
  /** Makes an instance's stored auth state unreadable, as a damaged disk or a bad restore would. */
  corruptAuth(instanceId: string): Promise<void>;
}

export interface EngineFixture {
  readonly name: StorageEngine;
  location(): Promise<StorageLocation>;
}

export const filesEngine: EngineFixture = {
  name: 'files',
  async location() {
    const dir = await mkdtemp(join(tmpdir(), 'gw-storage-'));
    return {
      engine: 'files',
      address: dir,
      open: (options) => openAt('files', dir, options),
      destroy: () => rm(dir, { recursive: true, force: true }),
      corruptAuth: (id) => writeFile(join(storePaths(dir).authDir, `${id}.json`), '{"format":1,"creds":{"no'),
    };
  },
};

/** A fresh database per location (test/helpers/postgres.ts says where the server comes from). */
export const postgresEngine: EngineFixture = {
  name: 'postgres',
  async location() {
    const db = await freshDatabase();
    return {
      engine: 'postgres',
      address: db.url,
      open: (options) => openAt('postgres', db.url, options),
      destroy: () => db.drop(),
      async corruptAuth(id) {
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        try {
          await client.query(`UPDATE auth_creds SET creds = '{"no' WHERE instance_id = $1`, [id]);
        } finally {
          await client.end();
        }
      },
    };
  },
};

export const ENGINES: readonly EngineFixture[] = [filesEngine, postgresEngine];

/**
 * Registers `title` once per engine (`files: title`, `postgres: title`), each with a fresh location
 * that is destroyed afterwards; storages opened through `open` are closed first.
 */
export function engineTest(title: string, fn: (t: ExecutionContext, at: StorageLocation) => Promise<void>): void {
  for (const engine of ENGINES) {
    // The postgres tests of a file run one at a time: each opens its own pools, and the server's
    // connections are shared with every other test file running meanwhile.
    const register = engine.name === 'postgres' ? test.serial : test;
    register(`${engine.name}: ${title}`, async (t) => {
      const loc = await engine.location();
      const opened: Storage[] = [];
      const at: StorageLocation = {
        ...loc,
        open: async (options) => {
          const s = await loc.open(options);
          opened.push(s);
          return s;
        },
      };
      try {
        await fn(t, at);
      } finally {
        for (const s of opened.reverse()) await s.close().catch(() => undefined);
        await loc.destroy();
      }
    });
  }
}
