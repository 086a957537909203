import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { storageError } from '../domain/errors.js';
import Type, { type Static } from 'typebox';
import { matches } from '../schemas/check.js';
import { ensureDir, writeFileAtomic } from '../storage/files/atomic-write.js';
import { AtomicJsonFile } from '../storage/files/json-file.js';
import { isInstanceId, storePaths } from '../storage/files/paths.js';
import { flowRevision } from './compiled.js';
import { ConversationRecord, HandoverRecord, StoredFlowRecord, type Conversation, type Flow, type Handover, type StoredFlow } from './types.js';

/**
 * The files of one instance's chatbot, under DATA_DIR/flows/<instanceId>/: flow.json (the flow),
 * handovers.json (open handovers) and conversations.json (where each chat stands). One process
 * writes them (the daemon, or a CLI command while none runs); each write is atomic.
 */
const HandoversDocSchema = Type.Object({ version: Type.Literal(1), handovers: Type.Record(Type.String(), HandoverRecord) });
export type HandoversDoc = Static<typeof HandoversDocSchema>;

const ConversationsDocSchema = Type.Object({ version: Type.Literal(1), conversations: Type.Record(Type.String(), ConversationRecord) });
export type ConversationsDoc = Static<typeof ConversationsDocSchema>;

const isStoredFlow = (v: unknown): v is StoredFlow => matches(StoredFlowRecord, v);
const isHandoversDoc = (v: unknown): v is HandoversDoc => matches(HandoversDocSchema, v);
const isConversationsDoc = (v: unknown): v is ConversationsDoc => matches(ConversationsDocSchema, v);

/** Null-prototype copy, so chat ids such as "__proto__" are plain keys. */
function dict<T>(from: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

/** True while `handover` mutes its chat at time `now`. */
export function isOpen(handover: Handover, now: number): boolean {
  return Date.parse(handover.expiresAt) > now;
}

/** A handover as REST and the CLI's --json show it. */
export function handoverView(h: Handover) {
  return { phone: h.phone, chatId: h.chatId, fromName: h.fromName ?? null, flow: h.flow, node: h.node, openedAt: h.openedAt, expiresAt: h.expiresAt };
}

export class FlowFiles {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = storePaths(dataDir).flowsDir;
  }

  dir(instanceId: string): string {
    // Ids reach paths only after this check: "../x" or "__proto__" never name a directory.
    if (!isInstanceId(instanceId)) throw new Error(`not an instance id: ${JSON.stringify(instanceId.slice(0, 60))}`);
    return join(this.root, instanceId);
  }

  private file(id: string, name: string): string {
    return join(this.dir(id), name);
  }

  private async write(id: string, name: string, text: string): Promise<void> {
    try {
      await ensureDir(this.dir(id));
      await writeFileAtomic(this.file(id, name), text);
    } catch (err) {
      throw storageError(err, `flows/${id}/${name}`);
    }
  }

  /** The stored flow or null; throws STORE_CORRUPT for a file that will not parse. */
  async readFlow(id: string): Promise<StoredFlow | null> {
    return new AtomicJsonFile(this.file(id, 'flow.json'), isStoredFlow).read();
  }

  /** Stores an already validated flow. */
  async writeFlow(id: string, flow: Flow, now: number): Promise<StoredFlow> {
    const stored: StoredFlow = { version: 1, revision: flowRevision(flow), updatedAt: new Date(now).toISOString(), flow };
    await this.write(id, 'flow.json', `${JSON.stringify(stored, null, 2)}\n`);
    return stored;
  }

  async clearFlow(id: string): Promise<void> {
    await rm(this.file(id, 'flow.json'), { force: true });
  }

  async readHandovers(id: string): Promise<Record<string, Handover>> {
    const doc = await new AtomicJsonFile(this.file(id, 'handovers.json'), isHandoversDoc).read();
    return dict(doc?.handovers ?? {});
  }

  async writeHandovers(id: string, handovers: Record<string, Handover>): Promise<void> {
    await this.write(id, 'handovers.json', JSON.stringify({ version: 1, handovers } satisfies HandoversDoc));
  }

  async readConversations(id: string): Promise<Record<string, Conversation>> {
    const doc = await new AtomicJsonFile(this.file(id, 'conversations.json'), isConversationsDoc).read();
    return dict(doc?.conversations ?? {});
  }

  /** Positions: losing the last few in a crash only restarts those chats, so no fsync. */
  async writeConversations(id: string, conversations: Record<string, Conversation>): Promise<void> {
    await ensureDir(this.dir(id));
    await writeFileAtomic(this.file(id, 'conversations.json'), JSON.stringify({ version: 1, conversations } satisfies ConversationsDoc), { durable: false });
  }

  async removeInstance(id: string): Promise<void> {
    await rm(this.dir(id), { recursive: true, force: true });
  }
}
