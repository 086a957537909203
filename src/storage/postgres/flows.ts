import { GatewayError, errorMessage } from '../../domain/errors.js';
import { matches } from '../../schemas/check.js';
import { ConversationRecord, HandoverRecord, StoredFlowRecord, type Conversation, type Handover, type StoredFlow } from '../../schemas/flow.js';
import type { FlowRepository } from '../ports/flows.js';
import type { Db } from './db.js';
import type { LeaseEpochs } from './lease-epochs.js';

function corrupt(instanceId: string, what: string, detail: string): GatewayError {
  return new GatewayError('STORE_CORRUPT', `the stored ${what} of ${instanceId} is unreadable (${detail}); it was left untouched`, {
    publicMessage: `the stored ${what} is corrupt and was left untouched`,
  });
}

function parse<T>(instanceId: string, what: string, text: string, check: (v: unknown) => v is T): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corrupt(instanceId, what, errorMessage(err));
  }
  if (!check(value)) throw corrupt(instanceId, what, 'unexpected shape');
  return value;
}

const isStoredFlow = (v: unknown): v is StoredFlow => matches(StoredFlowRecord, v);
const isHandover = (v: unknown): v is Handover => matches(HandoverRecord, v);
const isConversation = (v: unknown): v is Conversation => matches(ConversationRecord, v);

/**
 * The chatbot's state in PostgreSQL: the flow in one row per instance, each open handover and each
 * chat's position in a row of its own; a save writes only the rows that changed (one statement).
 */
export class PgFlows implements FlowRepository {
  constructor(
    private readonly db: Db,
    /** The lease epoch each handover and position write carries (migration 011). */
    private readonly epochs: LeaseEpochs,
  ) {}

  async readFlow(instanceId: string): Promise<StoredFlow | null> {
    const { rows } = await this.db.query<{ doc: string }>('flows', 'SELECT doc FROM flows WHERE instance_id = $1', [instanceId]);
    return rows[0] ? parse(instanceId, 'flow', rows[0].doc, isStoredFlow) : null;
  }

  async writeFlow(instanceId: string, stored: StoredFlow): Promise<void> {
    await this.db.query('flows', 'INSERT INTO flows (instance_id, doc) VALUES ($1, $2) ON CONFLICT (instance_id) DO UPDATE SET doc = excluded.doc', [instanceId, JSON.stringify(stored)]);
  }

  async clearFlow(instanceId: string): Promise<void> {
    await this.db.query('flows', 'DELETE FROM flows WHERE instance_id = $1', [instanceId]);
  }

  async readHandovers(instanceId: string): Promise<Map<string, Handover>> {
    return this.readRows(instanceId, 'handovers', 'handover', isHandover);
  }

  async saveHandovers(instanceId: string, all: ReadonlyMap<string, Handover>, changed: Iterable<string>): Promise<void> {
    await this.saveRows(instanceId, 'handovers', all, changed, false);
  }

  async instancesWithHandovers(): Promise<string[]> {
    const { rows } = await this.db.query<{ instance_id: string }>('flows', 'SELECT DISTINCT instance_id FROM handovers');
    return rows.map((r) => r.instance_id);
  }

  async readConversations(instanceId: string): Promise<Map<string, Conversation>> {
    return this.readRows(instanceId, 'conversations', 'conversation position', isConversation);
  }

  async saveConversations(instanceId: string, all: ReadonlyMap<string, Conversation>, changed: Iterable<string>): Promise<void> {
    // Positions may be lost in a crash (that chat restarts): not waited for on the disk.
    await this.saveRows(instanceId, 'conversations', all, changed, true);
  }

  async removeInstance(instanceId: string): Promise<void> {
    await this.db.query(
      'flows',
      `WITH a AS (DELETE FROM flows WHERE instance_id = $1), b AS (DELETE FROM handovers WHERE instance_id = $1)
      DELETE FROM conversations WHERE instance_id = $1`,
      [instanceId],
    );
  }

  private async readRows<T>(instanceId: string, table: 'handovers' | 'conversations', what: string, check: (v: unknown) => v is T): Promise<Map<string, T>> {
    const { rows } = await this.db.query<{ chat_id: string; doc: string }>('flows', `SELECT chat_id, doc FROM ${table} WHERE instance_id = $1`, [instanceId]);
    return new Map(rows.map((r) => [r.chat_id, parse(instanceId, what, r.doc, check)]));
  }

  /** Upserts the changed chats still in `all`, deletes the changed ones that left it. */
  private async saveRows<T>(instanceId: string, table: 'handovers' | 'conversations', all: ReadonlyMap<string, T>, changed: Iterable<string>, lazy: boolean): Promise<void> {
    const put: string[] = [];
    const docs: string[] = [];
    const gone: string[] = [];
    for (const chatId of new Set(changed)) {
      const value = all.get(chatId);
      if (value === undefined) gone.push(chatId);
      else {
        put.push(chatId);
        docs.push(JSON.stringify(value));
      }
    }
    if (put.length + gone.length === 0) return;
    await this.db.query(
      'flows',
      `WITH d AS (DELETE FROM ${table} WHERE instance_id = $1 AND chat_id = ANY ($4::text[]))
      INSERT INTO ${table} (instance_id, chat_id, doc, lease_epoch) SELECT $1, c, x, $5::bigint FROM unnest($2::text[], $3::text[]) AS u(c, x)
      ON CONFLICT (instance_id, chat_id) DO UPDATE SET doc = excluded.doc, lease_epoch = $5::bigint`,
      [instanceId, put, docs, gone, this.epochs.of(instanceId)],
      lazy,
    );
  }
}
