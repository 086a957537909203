import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { GatewayError, errorMessage, storageError } from '../../domain/errors.js';
import type { AuthSnapshot, AuthStateRepository, Revive, StoredAuth } from '../ports/auth-state.js';
import { ensureDir, writeFileAtomic, type WriteGuard } from '../../fs/atomic-write.js';
import { readPairedSync } from './auth-files.js';
import { processRunning } from './process-identity.js';

const FORMAT = 1;
const SAFE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

/** The state exists but cannot be used; pairing afresh over it would lose the session. */
export function corruptAuth(where: string, detail: string): GatewayError {
  return new GatewayError(
    'STORE_CORRUPT',
    `credentials file ${where} is unreadable (${detail}); refusing to start a new pairing over it. Restore it from a backup, or delete it (or log the instance out) to pair again.`,
    { publicMessage: 'the stored WhatsApp credentials of this instance are unreadable and were left untouched; log the instance out to pair again' },
  );
}

/**
 * Auth state in files: one JSON file per instance (DATA_DIR/auth/<id>.json, 0600), written whole
 * and atomically, so the file is always one moment of creds and keys together:
 * `{"format":1,"paired":…,"creds":…,"keys":{"<type>":{…},…}}`.
 */
export class FileAuthStates implements AuthStateRepository {
  /** Leftover temp files, listed at the first read (sweepTemp). */
  private leftovers: Promise<Map<string, string[]>> | null = null;

  constructor(
    private readonly dir: string,
    private readonly guard: WriteGuard,
  ) {}

  file(instanceId: string): string {
    // Ids reach paths only after this check: "../x" never names a file.
    if (!SAFE_NAME.test(instanceId)) throw new Error(`not an instance id: ${JSON.stringify(instanceId.slice(0, 60))}`);
    return join(this.dir, `${instanceId}.json`);
  }

  /** Versions before the auth port kept a sandbox's pairing in a file of its own. */
  private legacySandboxFile(instanceId: string): string {
    return join(this.dir, `${instanceId}.sandbox.json`);
  }

  async read(instanceId: string, revive: Revive = (v) => v): Promise<StoredAuth | null> {
    const file = this.file(instanceId);
    await this.sweepTemp(instanceId);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw corruptAuth(file, `cannot read it: ${errorMessage(err)}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw corruptAuth(file, `not valid JSON: ${errorMessage(err)}`);
    }
    if (typeof parsed !== 'object' || parsed === null) throw corruptAuth(file, 'not a JSON object');
    const doc = parsed as { format?: unknown; creds?: unknown; keys?: unknown };
    if (doc.format !== FORMAT) throw corruptAuth(file, `unknown format ${String(doc.format)}`);
    if (typeof doc.keys !== 'object' || doc.keys === null) throw corruptAuth(file, 'keys are malformed');
    try {
      // fromEntries: a table named "__proto__" stays a table.
      const keys = Object.fromEntries(Object.entries(doc.keys).map(([type, table]) => [type, revive(table)])) as Record<string, unknown>;
      return { creds: revive(doc.creds), keys };
    } catch (err) {
      throw corruptAuth(file, `cannot be decoded: ${errorMessage(err)}`);
    }
  }

  async write(instanceId: string, snapshot: AuthSnapshot): Promise<void> {
    const data = encodeSnapshot(snapshot);
    try {
      await ensureDir(this.dir);
      await writeFileAtomic(this.file(instanceId), data, { guard: this.guard });
    } catch (err) {
      throw storageError(err, `credentials of ${instanceId}`);
    }
  }

  async remove(instanceId: string): Promise<void> {
    await rm(this.file(instanceId), { force: true });
    await rm(this.legacySandboxFile(instanceId), { force: true });
    // Temp files of an interrupted write of this instance's credentials.
    const prefix = `.${instanceId}.json.`;
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      if (name.startsWith(prefix) && name.endsWith('.tmp')) await rm(join(this.dir, name), { force: true });
    }
  }

  /**
   * Removes temp files a writer of this instance's credentials left when it died mid-write; only
   * those of processes that are gone (a live writer's temp file is about to be renamed).
   *
   * The directory is listed once, at the first read, not at each: a daemon starting with 5,000
   * instances listed 5,000 names 5,000 times (0.45 ms of the main thread a login at 500 instances,
   * growing with their number; `readdir` in the restart profile of the sessions bench). Leftovers
   * come from a process that died; while this one runs, no other writes here (the data dir lock),
   * and its own failed writes remove their temp files.
   */
  private async sweepTemp(instanceId: string): Promise<void> {
    this.leftovers ??= this.listLeftovers();
    const leftovers = await this.leftovers;
    const names = leftovers.get(instanceId);
    if (!names) return;
    leftovers.delete(instanceId);
    const prefix = `.${instanceId}.json.`;
    for (const name of names) {
      const pid = Number(name.slice(prefix.length).split('.')[0]);
      if (Number.isInteger(pid) && pid !== process.pid && processRunning(pid, null)) continue;
      await rm(join(this.dir, name), { force: true }).catch(() => undefined);
    }
  }

  /** Temp files in the directory (`.<id>.json.<pid>.<random>.tmp`), by instance id. */
  private async listLeftovers(): Promise<Map<string, string[]>> {
    const byInstance = new Map<string, string[]>();
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      if (!name.startsWith('.') || !name.endsWith('.tmp')) continue;
      const at = name.indexOf('.json.');
      if (at < 0) continue;
      const id = name.slice(1, at);
      const names = byInstance.get(id);
      if (names) names.push(name);
      else byInstance.set(id, [name]);
    }
    return byInstance;
  }

  async isPaired(instanceId: string): Promise<boolean> {
    return readPairedSync(this.file(instanceId)) || readPairedSync(this.legacySandboxFile(instanceId));
  }
}

/**
 * The file's text: `{"format":…,"paired":…,"creds":…,"keys":{"<type>":<table>,…}}`. Tables given as
 * bytes (from a session thread) are joined as bytes, outside the JS heap: a string of the whole
 * state (hundreds of KB a write while a phone pairs) would be garbage for the daemon's collector.
 */
function encodeSnapshot(snapshot: AuthSnapshot): string | Uint8Array {
  const head = `{"format":${FORMAT},"paired":${snapshot.paired},"creds":${snapshot.creds},"keys":{`;
  if (!snapshot.tables.every((t) => t.bytes)) {
    const tables: string[] = [];
    for (const t of snapshot.tables) tables.push(`${JSON.stringify(t.type)}:${t.json()}`);
    return `${head}${tables.join(',')}}}`;
  }
  const parts: Uint8Array[] = [Buffer.from(head)];
  snapshot.tables.forEach((t, i) => {
    parts.push(Buffer.from(`${i > 0 ? ',' : ''}${JSON.stringify(t.type)}:`));
    parts.push(t.bytes!());
  });
  parts.push(Buffer.from('}}'));
  return Buffer.concat(parts);
}