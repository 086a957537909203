import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import Type, { type Static } from 'typebox';
import { storageError } from '../../domain/errors.js';
import { isInstanceId } from '../../domain/ids.js';
import { matches } from '../../schemas/check.js';
import { ConversationRecord, HandoverRecord, StoredFlowRecord, type Conversation, type Handover, type StoredFlow } from '../../schemas/flow.js';
import type { FlowRepository } from '../ports/flows.js';
import { ensureDir, writeFileAtomic, type WriteGuard } from '../../fs/atomic-write.js';
import { AtomicJsonFile } from './json-file.js';

const HandoversDocSchema = Type.Object({ version: Type.Literal(1), handovers: Type.Record(Type.String(), HandoverRecord) });
type HandoversDoc = Static<typeof HandoversDocSchema>;
const ConversationsDocSchema = Type.Object({ version: Type.Literal(1), conversations: Type.Record(Type.String(), ConversationRecord) });
type ConversationsDoc = Static<typeof ConversationsDocSchema>;

const isStoredFlow = (v: unknown): v is StoredFlow => matches(StoredFlowRecord, v);
const isHandoversDoc = (v: unknown): v is HandoversDoc => matches(HandoversDocSchema, v);
const isConversationsDoc = (v: unknown): v is ConversationsDoc => matches(ConversationsDocSchema, v);

/**
 * The chatbot's files of one instance, under DATA_DIR/flows/<instanceId>/: flow.json (the flow),
 * handovers.json (open handovers) and conversations.json (where each chat stands), each written
 * whole and atomically. One process writes them (the daemon, or a CLI command while none runs).
 */
export class FlowFiles implements FlowRepository {
  constructor(
    readonly root: string,
    private readonly guard: WriteGuard,
  ) {}

  dir(instanceId: string): string {
    // Ids reach paths only after this check: "../x" or "__proto__" never name a directory.
    if (!isInstanceId(instanceId)) throw new Error(`not an instance id: ${JSON.stringify(instanceId.slice(0, 60))}`);
    return join(this.root, instanceId);
  }

  private file(id: string, name: string): string {
    return join(this.dir(id), name);
  }

  private async write(id: string, name: string, text: string, durable = true): Promise<void> {
    try {
      await ensureDir(this.dir(id));
      await writeFileAtomic(this.file(id, name), text, { durable, guard: this.guard });
    } catch (err) {
      throw storageError(err, `flows/${id}/${name}`);
    }
  }

  async readFlow(id: string): Promise<StoredFlow | null> {
    return new AtomicJsonFile(this.file(id, 'flow.json'), isStoredFlow, this.guard).read();
  }

  async writeFlow(id: string, stored: StoredFlow): Promise<void> {
    await this.write(id, 'flow.json', `${JSON.stringify(stored, null, 2)}\n`);
  }

  async clearFlow(id: string): Promise<void> {
    await rm(this.file(id, 'flow.json'), { force: true });
  }

  async readHandovers(id: string): Promise<Map<string, Handover>> {
    const doc = await new AtomicJsonFile(this.file(id, 'handovers.json'), isHandoversDoc, this.guard).read();
    return new Map(Object.entries(doc?.handovers ?? {}));
  }

  async saveHandovers(id: string, all: ReadonlyMap<string, Handover>): Promise<void> {
    await this.write(id, 'handovers.json', JSON.stringify({ version: 1, handovers: Object.fromEntries(all) } satisfies HandoversDoc));
  }

  async instancesWithHandovers(): Promise<string[]> {
    return (await readdir(this.root).catch(() => [] as string[])).filter(isInstanceId);
  }

  async readConversations(id: string): Promise<Map<string, Conversation>> {
    const doc = await new AtomicJsonFile(this.file(id, 'conversations.json'), isConversationsDoc, this.guard).read();
    return new Map(Object.entries(doc?.conversations ?? {}));
  }

  /** Positions: losing the last few in a crash only restarts those chats, so no fsync. */
  async saveConversations(id: string, all: ReadonlyMap<string, Conversation>): Promise<void> {
    await this.write(id, 'conversations.json', JSON.stringify({ version: 1, conversations: Object.fromEntries(all) } satisfies ConversationsDoc), false);
  }

  async removeInstance(id: string): Promise<void> {
    await rm(this.dir(id), { recursive: true, force: true });
  }
}
