/**
 * Fresh, empty PostgreSQL databases for tests (and benches). Where the server comes from, first
 * that works:
 * 1. `GATEWAY_TEST_DATABASE_URL`: a server this URL reaches with the right to CREATE DATABASE;
 * 2. the server on 127.0.0.1:5432 (trust auth, user `postgres`), if it answers;
 * 3. a throwaway cluster of Debian's postgresql package (/usr/lib/postgresql/15/bin), started by
 *    this process (as the `postgres` OS user when running as root) and stopped when it exits.
 * Each database is `gwtest_<random>`, dropped (WITH FORCE: a killed child may have left sessions)
 * by `drop()`. Nothing is skipped: without a server this fails, naming what to install.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const BIN = '/usr/lib/postgresql/15/bin';

export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** A server's URL with another database name. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** A server URL on a local port nothing listens on (connection refused). */
export async function freePortUrl(): Promise<string> {
  return `postgres://gw@127.0.0.1:${await freePort()}/postgres`;
}

export interface Cluster {
  readonly url: string;
  readonly dir: string;
  readonly port: number;
  start(): void;
  /** `fast` disconnects clients and shuts down cleanly; `immediate` is a crash of the server. */
  stop(mode?: 'fast' | 'immediate'): void;
  destroy(): void;
}

/**
 * Starts a throwaway cluster (trust auth, user `gw`) in a temp dir; `extra` adds server settings
 * (`-c max_connections=5`). It is stopped and removed when this process exits.
 */
export async function startCluster(extra: string[] = []): Promise<Cluster> {
  if (!existsSync(join(BIN, 'initdb'))) {
    throw new Error(`no PostgreSQL server: set GATEWAY_TEST_DATABASE_URL, start one on 127.0.0.1:5432, or install Debian's postgresql package (${BIN}/initdb)`);
  }
  const root = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'gw-pg-'));
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dir, uid, gid);
  }
  // As root, PostgreSQL refuses to run: its tools run as the postgres user instead.
  const run = (cmd: string, args: string[]): void => {
    const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', join(BIN, cmd), ...args]] : [join(BIN, cmd), args];
    const r = spawnSync(file, argv, { encoding: 'utf8', cwd: tmpdir() });
    if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
  run('initdb', ['-D', dir, '-U', 'gw', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const options = [`-k ${dir}`, `-p ${port}`, '-c listen_addresses=127.0.0.1', '-c fsync=on', ...extra.map((e) => `-c ${e}`)].join(' ');
  let running = false;
  const cluster: Cluster = {
    url: `postgres://gw@127.0.0.1:${port}/postgres`,
    dir,
    port,
    start() {
      run('pg_ctl', ['-D', dir, '-o', options, '-l', join(dir, 'server.log'), '-w', 'start']);
      running = true;
    },
    stop(mode = 'fast') {
      if (!running) return;
      running = false;
      run('pg_ctl', ['-D', dir, '-m', mode, '-w', 'stop']);
    },
    destroy() {
      try {
        cluster.stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  process.once('exit', () => {
    try {
      cluster.destroy();
    } catch {
      // Exiting anyway; a leftover temp dir is all that remains.
    }
  });
  cluster.start();
  return cluster;
}

let server: Promise<string> | null = null;

/** The URL of a server to create test databases on (decided once per process). */
export function testServer(): Promise<string> {
  server ??= (async () => {
    const given = process.env.GATEWAY_TEST_DATABASE_URL;
    if (given) return given;
    const local = 'postgres://postgres@127.0.0.1:5432/postgres';
    if (await answers(local)) return local;
    return (await startCluster()).url;
  })();
  return server;
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A new empty database on `serverUrl` (default: the test server). */
export async function freshDatabase(serverUrl?: string): Promise<TestDatabase> {
  const base = serverUrl ?? (await testServer());
  const name = `gwtest_${randomBytes(6).toString('hex')}`;
  await admin(base, (c) => c.query(`CREATE DATABASE ${name}`));
  return {
    url: withDatabase(base, name),
    drop: () => admin(base, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}
