import type pg from 'pg';
import type { Logger } from 'pino';
import { DAY_MS, type Clock } from '../../domain/clock.js';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { MAX_PREMIUM_DAYS } from '../../domain/limits.js';
import { generateApiKey, generateInstanceId, hashSecret } from '../../domain/secrets.js';
import { matches } from '../../schemas/check.js';
import { InstanceRecordSchema, type InstanceRecord } from '../../schemas/instance.js';
import type { CreateInstanceInput, CreatedInstance, InstanceRepository } from '../ports/instances.js';
import type { Db } from './db.js';
import { CHANGES } from './session-sql.js';
import type { Session } from './session.js';

const DEFAULT_OWNER = 'default';

interface Row {
  instance_id: string;
  doc: unknown;
  version: number;
}

interface Cached {
  record: InstanceRecord;
  version: number;
}

function notFound(id: string): GatewayError {
  return new GatewayError('NOT_FOUND', `no instance with id ${JSON.stringify(id.slice(0, 60))}`);
}

function corrupt(id: string, detail: string): GatewayError {
  return new GatewayError('STORE_CORRUPT', `instances row ${JSON.stringify(id)} is corrupt (${detail}); the gateway refuses to start until it is fixed or restored from a backup, and left it untouched`, {
    publicMessage: 'stored data is corrupt and was left untouched; the daemon log names the row',
  });
}

function parse(row: Row): Cached {
  if (!matches(InstanceRecordSchema, row.doc) || row.doc.id !== row.instance_id) throw corrupt(row.instance_id, 'unexpected shape');
  return { record: row.doc, version: row.version };
}

/**
 * Instances in PostgreSQL, every record cached in memory: requests read the cache (synchronously,
 * as the port wants), writes go to the database first and update the cache once committed. Each
 * write announces its instance on the changes channel, so every other process re-reads that row
 * and tells its `onChange` listeners; a row's version keeps a late re-read from replacing a newer
 * write of this process.
 */
export class PgInstances implements InstanceRepository {
  private readonly cache = new Map<string, Cached>();
  private readonly listeners = new Set<(id: string) => void>();

  constructor(
    private readonly db: Db,
    private readonly session: () => Session,
    private readonly clock: Clock,
    private trialDays: number,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    const { rows } = await this.db.query<Row>('instances', 'SELECT instance_id, doc, version FROM instances');
    const loaded = rows.map((r) => [r.instance_id, parse(r)] as const);
    this.cache.clear();
    for (const [id, c] of loaded) this.cache.set(id, c);
  }

  get(id: string): InstanceRecord | undefined {
    const record = this.getAny(id);
    return record?.deleting ? undefined : record;
  }

  getAny(id: string): InstanceRecord | undefined {
    return this.cache.get(id)?.record;
  }

  list(): InstanceRecord[] {
    return [...this.cache.values()]
      .map((c) => c.record)
      .filter((r) => !r.deleting)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  deleting(): InstanceRecord[] {
    return [...this.cache.values()].map((c) => c.record).filter((r) => r.deleting);
  }

  get size(): number {
    return this.list().length;
  }

  require(id: string): InstanceRecord {
    const record = this.get(id);
    if (!record) throw notFound(id);
    return record;
  }

  /**
   * `beforeWrite` (the starting credits) runs first, outside the transaction, so no connection
   * waits on it; then the trial grant and the record are one transaction. The owner's row is the
   * trial: of concurrent creates (on any node) the first to insert it gets the trial, the others
   * wait for its commit and find it there.
   */
  async create(input: CreateInstanceInput, beforeWrite?: (id: string) => Promise<void>): Promise<CreatedInstance> {
    const apiKey = generateApiKey();
    const now = this.clock.now();
    const owner = input.owner?.trim() || DEFAULT_OWNER;
    const sandbox = input.sandbox ?? false;
    const id = generateInstanceId();
    if (beforeWrite) await beforeWrite(id);
    const { record, trialGranted, version } = await this.db.transaction('instances', async (client) => {
      // A sandbox never takes the owner's one-time trial (contract part 3).
      let trialGranted = false;
      if (!sandbox && this.trialDays > 0) {
        const t = await client.query('INSERT INTO owners (owner, trial_instance_id, trial_granted_at) VALUES ($1, $2, $3) ON CONFLICT (owner) DO NOTHING', [owner, id, new Date(now).toISOString()]);
        trialGranted = t.rowCount === 1;
      }
      let premiumMs = trialGranted ? this.trialDays * DAY_MS : 0;
      premiumMs += Math.min(input.premiumDays ?? 0, MAX_PREMIUM_DAYS) * DAY_MS;
      const record: InstanceRecord = {
        id,
        name: input.name?.trim() || id,
        owner,
        sandbox,
        keyHash: hashSecret(apiKey),
        createdAt: new Date(now).toISOString(),
        premiumUntil: premiumMs > 0 ? new Date(now + premiumMs).toISOString() : null,
        webhook: input.webhook ?? null,
      };
      const ins = await client.query<{ version: number }>('INSERT INTO instances (instance_id, doc) VALUES ($1, $2) RETURNING version', [id, record]);
      await this.announce(client, id);
      return { record, trialGranted, version: ins.rows[0]!.version };
    });
    this.remember(id, record, version);
    return { record, apiKey, trialGranted };
  }

  async modify(id: string, fn: (record: InstanceRecord) => void): Promise<InstanceRecord> {
    return this.change(id, (record) => {
      if (record.deleting) throw notFound(id);
      fn(record);
    });
  }

  async markDeleting(id: string): Promise<InstanceRecord> {
    return this.change(id, (record) => {
      record.deleting = true;
    });
  }

  async remove(id: string): Promise<InstanceRecord> {
    const removed = await this.db.transaction('instances', async (client) => {
      const { rows } = await client.query<Row>('DELETE FROM instances WHERE instance_id = $1 RETURNING instance_id, doc, version', [id]);
      if (!rows[0]) return null;
      await this.announce(client, id);
      return rows[0];
    });
    if (!removed) throw notFound(id);
    this.cache.delete(id);
    return removed.doc as InstanceRecord;
  }

  setTrialDays(days: number): void {
    this.trialDays = days;
  }

  onChange(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Another process changed this instance: re-read its row, then tell the listeners. */
  async refresh(id: string): Promise<void> {
    await this.changed(id);
  }

  async changed(id: string): Promise<void> {
    try {
      const { rows } = await this.db.query<Row>('instances', 'SELECT instance_id, doc, version FROM instances WHERE instance_id = $1', [id]);
      const row = rows[0];
      if (!row) this.cache.delete(id);
      else {
        const c = parse(row);
        this.remember(id, c.record, c.version);
      }
    } catch (err) {
      // The next resync (after a reconnect) or write of this row brings the cache back.
      this.logger.warn({ instanceId: id, err: errorMessage(err) }, 'could not re-read an instance another node changed');
      return;
    }
    this.tell(id);
  }

  /** Notifications were missed: re-reads every row and tells the listeners what differs. */
  async resync(): Promise<void> {
    const before = new Map(this.cache);
    try {
      await this.load();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not re-read the instances after a reconnect');
      return;
    }
    for (const id of new Set([...before.keys(), ...this.cache.keys()])) {
      if (before.get(id)?.version !== this.cache.get(id)?.version) this.tell(id);
    }
  }

  private tell(id: string): void {
    for (const l of this.listeners) {
      try {
        l(id);
      } catch (err) {
        this.logger.error({ instanceId: id, err: errorMessage(err) }, 'an instance change listener failed');
      }
    }
  }

  private remember(id: string, record: InstanceRecord, version: number): void {
    const had = this.cache.get(id);
    if (!had || had.version < version) this.cache.set(id, { record, version });
  }

  /** Read, change and write one record under its row lock; `fn` may throw to change nothing. */
  private async change(id: string, fn: (record: InstanceRecord) => void): Promise<InstanceRecord> {
    const { record, version } = await this.db.transaction('instances', async (client) => {
      const { rows } = await client.query<Row>('SELECT instance_id, doc, version FROM instances WHERE instance_id = $1 FOR UPDATE', [id]);
      if (!rows[0]) throw notFound(id);
      const { record } = parse(rows[0]);
      fn(record);
      const up = await client.query<{ version: number }>('UPDATE instances SET doc = $2, version = version + 1 WHERE instance_id = $1 RETURNING version', [id, record]);
      await this.announce(client, id);
      return { record, version: up.rows[0]!.version };
    });
    this.remember(id, record, version);
    return record;
  }

  private async announce(client: pg.ClientBase, id: string): Promise<void> {
    await client.query('SELECT pg_notify($1, $2)', [CHANGES, this.session().payload('instances', id)]);
  }
}
