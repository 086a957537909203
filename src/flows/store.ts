import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ensureDir, writeFileAtomic } from '../store/atomic-write.js';
import { AtomicJsonFile } from '../store/json-file.js';
import { withFileLock } from '../store/lock.js';
import { isInstanceId, storePaths } from '../store/paths.js';
import { flowRevision } from './compiled.js';
import type { Conversation, Flow, Handover, StoredFlow } from './types.js';
import { isRecord } from '../domain/guards.js';

/**
 * The files of one instance's chatbot, under DATA_DIR/flows/<instanceId>/:
 * - flow.json: the flow (CLI and daemon write it; locked, atomic);
 * - handovers.json: open handovers (CLI and daemon write it; locked, atomic);
 * - conversations.json: where each chat stands (only the daemon writes it; atomic).
 * One directory per instance, so an inbound message rewrites only its own instance's small file.
 */
export interface HandoversDoc {
  version: 1;
  handovers: Record<string, Handover>;
}

export interface ConversationsDoc {
  version: 1;
  conversations: Record<string, Conversation>;
}


function isStoredFlow(v: unknown): v is StoredFlow {
  return isRecord(v) && v.version === 1 && typeof v.revision === 'string' && typeof v.updatedAt === 'string' && isRecord(v.flow);
}

function isHandover(v: unknown): v is Handover {
  return (
    isRecord(v) &&
    typeof v.chatId === 'string' &&
    typeof v.phone === 'string' &&
    typeof v.flow === 'string' &&
    typeof v.node === 'string' &&
    typeof v.openedAt === 'string' &&
    typeof v.expiresAt === 'string' &&
    (v.fromName === undefined || typeof v.fromName === 'string')
  );
}

function isHandoversDoc(v: unknown): v is HandoversDoc {
  return isRecord(v) && v.version === 1 && isRecord(v.handovers) && Object.values(v.handovers).every(isHandover);
}

function isConversation(v: unknown): v is Conversation {
  return isRecord(v) && typeof v.phone === 'string' && (v.node === null || typeof v.node === 'string') && typeof v.revision === 'string' && typeof v.updatedAt === 'string';
}

function isConversationsDoc(v: unknown): v is ConversationsDoc {
  return isRecord(v) && v.version === 1 && isRecord(v.conversations) && Object.values(v.conversations).every(isConversation);
}

/** Null-prototype copy, so chat ids such as "__proto__" are plain keys. */
function dict<T>(from: Record<string, T>): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, from);
}

/** A stat fingerprint; atomic renames give every version a new inode. */
export function fileIdentity(file: string): string {
  try {
    const s = statSync(file);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch {
    return 'missing';
  }
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

  flowFile(id: string): string {
    return join(this.dir(id), 'flow.json');
  }
  handoversFile(id: string): string {
    return join(this.dir(id), 'handovers.json');
  }
  conversationsFile(id: string): string {
    return join(this.dir(id), 'conversations.json');
  }

  /** The stored flow or null; throws CorruptStoreError for a file that will not parse. */
  async readFlow(id: string): Promise<StoredFlow | null> {
    return new AtomicJsonFile(this.flowFile(id), isStoredFlow).read();
  }

  /** Stores an already validated flow. */
  async writeFlow(id: string, flow: Flow, now: number): Promise<StoredFlow> {
    const stored: StoredFlow = { version: 1, revision: flowRevision(flow), updatedAt: new Date(now).toISOString(), flow };
    await ensureDir(this.dir(id));
    const file = this.flowFile(id);
    await withFileLock(file, () => writeFileAtomic(file, `${JSON.stringify(stored, null, 2)}\n`));
    return stored;
  }

  /** Removes the flow; false when there was none. */
  async clearFlow(id: string): Promise<boolean> {
    const file = this.flowFile(id);
    if (fileIdentity(file) === 'missing') return false;
    return withFileLock(file, async () => {
      const existed = fileIdentity(file) !== 'missing';
      await rm(file, { force: true });
      return existed;
    });
  }

  async readHandovers(id: string): Promise<HandoversDoc> {
    const doc = await new AtomicJsonFile(this.handoversFile(id), isHandoversDoc).read();
    return { version: 1, handovers: dict(doc?.handovers ?? {}) };
  }

  /** Locked read-modify-write of handovers.json; `fn` returns whether to write. */
  async updateHandovers<R>(id: string, fn: (doc: HandoversDoc) => { write: boolean; result: R }): Promise<R> {
    await ensureDir(this.dir(id));
    const file = this.handoversFile(id);
    return withFileLock(file, async () => {
      const doc = await this.readHandovers(id);
      const { write, result } = fn(doc);
      if (write) await writeFileAtomic(file, JSON.stringify(doc));
      return result;
    });
  }

  /** Removes the open handovers of `phone`; returns them (empty when none was open). */
  async releaseHandover(id: string, phone: string, now: number): Promise<Handover[]> {
    return this.updateHandovers(id, (doc) => {
      const released: Handover[] = [];
      let removed = 0;
      for (const [chatId, h] of Object.entries(doc.handovers)) {
        if (h.phone !== phone) continue;
        delete doc.handovers[chatId];
        removed++;
        // An expired one goes too, but does not count as released.
        if (isOpen(h, now)) released.push(h);
      }
      return { write: removed > 0, result: released };
    });
  }

  async readConversations(id: string): Promise<ConversationsDoc> {
    const doc = await new AtomicJsonFile(this.conversationsFile(id), isConversationsDoc).read();
    return { version: 1, conversations: dict(doc?.conversations ?? {}) };
  }

  /** Only the daemon writes conversations.json; atomic, no cross-process lock needed. */
  async writeConversations(id: string, doc: ConversationsDoc): Promise<void> {
    await writeFileAtomic(this.conversationsFile(id), JSON.stringify(doc));
  }
}
