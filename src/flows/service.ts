import { readdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { GatewayError, errorMessage } from '../domain/errors.js';
import { isE164 } from '../domain/phone.js';
import type { InboundMessage } from '../domain/types.js';
import type { EventBus } from '../events/bus.js';
import type { EventConsumer, GatewayEvent, HandoverEvent } from '../events/types.js';
import type { SendService } from '../sending/send-service.js';
import type { InstanceStore } from '../store/instances.js';
import { isInstanceId } from '../store/paths.js';
import { CoalescingWriter } from './coalescing-writer.js';
import { compileFlow, matchInput, type CompiledFlow } from './compiled.js';
import { runFlow } from './engine.js';
import { KeyedQueue } from './keyed-queue.js';
import { FlowFiles, fileIdentity, isOpen } from './store.js';
import type { Conversation, Handover, StoredFlow } from './types.js';
import { validateFlow } from './validate.js';

export interface FlowServiceDeps {
  dataDir: string;
  instances: InstanceStore;
  sender: SendService;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  handoverTimeoutMinutes: number;
}

export interface FlowServiceOptions {
  /** How often files are checked for changes by other processes and handovers for expiry. */
  pollMs?: number;
  /** Conversations remembered per instance; past it the least recently active are forgotten. */
  maxConversations?: number;
  /** Inbound messages waiting per chat; past it new ones are dropped (with a log line). */
  maxPendingPerChat?: number;
}

/** The daemon's view of one instance's chatbot. */
interface InstanceFlows {
  id: string;
  flow: CompiledFlow | null;
  stored: StoredFlow | null;
  flowIdentity: string;
  handovers: Map<string, Handover>;
  handoversIdentity: string;
  /** Insertion order = least recently active first. */
  conversations: Map<string, Conversation>;
  /** conversations.json would not parse: it is left untouched and positions live in memory only. */
  conversationsBroken: boolean;
  writer: CoalescingWriter;
  /** Refreshes run one at a time, so an older read never overwrites a newer one. */
  refreshing: Promise<void>;
}

/**
 * Runs every instance's flow on inbound messages: one chat at a time in arrival order, replies
 * through the SendService (so they cost credits), handovers that mute a chat until released or
 * timed out. Files written by the CLI are noticed on the next message (a stat per file) and by a
 * poll, within a second.
 */
export class FlowService implements EventConsumer {
  readonly name = 'flows';
  readonly files: FlowFiles;
  private readonly states = new Map<string, InstanceFlows>();
  private readonly loading = new Map<string, Promise<InstanceFlows>>();
  private readonly queue: KeyedQueue;
  private readonly log: Logger;
  private readonly maxConversations: number;
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  private stopped = false;

  constructor(
    private readonly deps: FlowServiceDeps,
    private readonly options: FlowServiceOptions = {},
  ) {
    this.files = new FlowFiles(deps.dataDir);
    this.log = deps.logger.child({ component: 'flows' });
    this.maxConversations = options.maxConversations ?? 10_000;
    this.queue = new KeyedQueue(options.maxPendingPerChat ?? 100, (err, key) => this.log.error({ err, chat: key }, 'flow step failed'));
  }

  private get timeoutMs(): number {
    return this.deps.handoverTimeoutMinutes * 60_000;
  }

  /** Loads the instances that have flow files (so their handovers expire) and starts polling. */
  async start(): Promise<void> {
    const names = await readdir(this.files.root).catch(() => [] as string[]);
    for (const id of names) {
      if (isInstanceId(id) && this.deps.instances.get(id)) await this.state(id).catch((err: unknown) => this.log.error({ err, instanceId: id }, 'could not load flow state'));
    }
    this.timer = setInterval(() => void this.poll(), this.options.pollMs ?? 500);
    this.timer.unref();
  }

  /** Stops polling, lets queued messages finish and flushes positions to disk. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await Promise.race([this.queue.idle(), new Promise((r) => setTimeout(r, 10_000).unref())]);
    await Promise.all([...this.states.values()].map((s) => s.writer.flush()));
  }

  /** Resolves once every queued inbound message has been handled (tests use it). */
  async idle(): Promise<void> {
    await this.queue.idle();
    await Promise.all([...this.states.values()].map((s) => s.writer.flush()));
  }

  async handle(event: GatewayEvent): Promise<void> {
    if (event.type !== 'message.received' || this.stopped) return;
    const { instanceId, data } = event;
    // Groups are left to people: a bot menu in a group would answer everyone.
    if (data.isGroup || !isE164(data.from) || !isInstanceId(instanceId)) return;
    // Not awaited: the connection's acknowledgement must not wait for paced bot replies.
    const queued = this.queue.push(`${instanceId}/${data.chatId}`, () => this.step(instanceId, data));
    if (!queued) this.log.warn({ instanceId, chatId: data.chatId }, 'too many messages waiting in this chat; the bot skips this one');
  }

  // ---- per-instance state --------------------------------------------------------------------

  private async state(id: string): Promise<InstanceFlows> {
    const known = this.states.get(id);
    if (known) {
      await this.refresh(known);
      return known;
    }
    let loading = this.loading.get(id);
    if (!loading) {
      loading = this.load(id).finally(() => this.loading.delete(id));
      this.loading.set(id, loading);
    }
    return loading;
  }

  private async load(id: string): Promise<InstanceFlows> {
    const st: InstanceFlows = {
      id,
      flow: null,
      stored: null,
      flowIdentity: '',
      handovers: new Map(),
      handoversIdentity: '',
      conversations: new Map(),
      conversationsBroken: false,
      writer: new CoalescingWriter(() => this.writeConversations(st)),
      refreshing: Promise.resolve(),
    };
    try {
      const doc = await this.files.readConversations(id);
      const sorted = Object.entries(doc.conversations).sort((a, b) => a[1].updatedAt.localeCompare(b[1].updatedAt));
      for (const [chatId, c] of sorted) st.conversations.set(chatId, c);
    } catch (err) {
      st.conversationsBroken = true;
      this.log.error({ instanceId: id, err: errorMessage(err) }, 'conversation positions unreadable; file left untouched, positions kept in memory only');
    }
    await this.refresh(st);
    this.states.set(id, st);
    return st;
  }

  /** Re-reads flow.json and handovers.json when another process (or we) replaced them. */
  private refresh(st: InstanceFlows): Promise<void> {
    const run = st.refreshing.then(() => this.reread(st));
    st.refreshing = run.catch(() => undefined);
    return run;
  }

  private async reread(st: InstanceFlows): Promise<void> {
    const flowId = fileIdentity(this.files.flowFile(st.id));
    if (flowId !== st.flowIdentity) {
      const before = st.flow?.revision ?? null;
      st.flowIdentity = flowId;
      try {
        st.stored = await this.files.readFlow(st.id);
        st.flow = st.stored ? compileFlow(st.stored.flow) : null;
      } catch (err) {
        st.stored = null;
        st.flow = null;
        this.log.error({ instanceId: st.id, err: errorMessage(err) }, 'stored flow is invalid; the bot is off for this instance until it is set again');
      }
      const after = st.flow?.revision ?? null;
      if (before !== after) this.log.info({ instanceId: st.id, flow: st.flow?.flow.name ?? null, revision: after }, st.flow ? 'flow loaded' : 'no flow');
    }
    const hoId = fileIdentity(this.files.handoversFile(st.id));
    if (hoId !== st.handoversIdentity) {
      try {
        const doc = await this.files.readHandovers(st.id);
        st.handovers = new Map(Object.entries(doc.handovers));
        st.handoversIdentity = hoId;
      } catch (err) {
        this.log.error({ instanceId: st.id, err: errorMessage(err) }, 'handovers file unreadable; keeping the handovers loaded before');
        st.handoversIdentity = hoId;
      }
    }
  }

  private async writeConversations(st: InstanceFlows): Promise<void> {
    if (st.conversationsBroken || !this.deps.instances.get(st.id)) return;
    const conversations = Object.fromEntries(st.conversations);
    await this.files.writeConversations(st.id, { version: 1, conversations });
  }

  private remember(st: InstanceFlows, chatId: string, conversation: Conversation | null): boolean {
    const had = st.conversations.get(chatId);
    if (conversation === null) return st.conversations.delete(chatId);
    if (had && had.node === conversation.node && had.revision === conversation.revision) return false;
    st.conversations.delete(chatId);
    st.conversations.set(chatId, conversation);
    while (st.conversations.size > this.maxConversations) {
      const oldest = st.conversations.keys().next().value as string;
      st.conversations.delete(oldest);
    }
    return true;
  }

  // ---- one inbound message -------------------------------------------------------------------

  private async step(instanceId: string, message: InboundMessage): Promise<void> {
    if (this.stopped || !this.deps.instances.get(instanceId)) return;
    const st = await this.state(instanceId);
    const compiled = st.flow;
    if (!compiled) return;
    const log = this.log.child({ instanceId, chatId: message.chatId });
    const now = this.deps.clock.now();

    const handover = st.handovers.get(message.chatId);
    if (handover) {
      if (isOpen(handover, now)) {
        log.debug('chat is handed over to a person; the bot stays silent');
        return;
      }
      await this.expire(st, now);
    }

    const conversation = st.conversations.get(message.chatId);
    const position = conversation && conversation.revision === compiled.revision ? conversation.node : null;
    const plan = runFlow(compiled, position, {
      text: matchInput(message.text ?? message.caption),
      name: message.fromName ?? '',
      phone: message.from,
    });
    if (plan.capped) log.warn({ flow: compiled.flow.name }, 'flow run stopped at the step limit; the conversation starts over');

    for (const text of plan.sends) {
      try {
        await this.deps.sender.send(instanceId, { kind: 'text', phone: message.from, text });
      } catch (err) {
        const code = err instanceof GatewayError ? err.code : 'INTERNAL';
        // Silent, and the conversation keeps the place it had before this message.
        log.warn({ code, reason: errorMessage(err), node: position ?? compiled.flow.start }, 'bot reply not sent; the conversation keeps its place');
        return;
      }
    }

    const next: Conversation | null =
      plan.position === null ? null : { phone: message.from, node: plan.position, revision: compiled.revision, updatedAt: new Date(now).toISOString() };
    if (this.remember(st, message.chatId, next)) {
      await st.writer.request().catch((err: unknown) => log.error({ err: errorMessage(err) }, 'could not store the conversation position'));
    }
    if (plan.handover) await this.openHandover(st, compiled, message, plan.handover.node, now);
  }

  private async openHandover(st: InstanceFlows, compiled: CompiledFlow, message: InboundMessage, node: string, now: number): Promise<void> {
    const handover: Handover = {
      chatId: message.chatId,
      phone: message.from,
      ...(message.fromName ? { fromName: message.fromName } : {}),
      flow: compiled.flow.name,
      node,
      openedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.timeoutMs).toISOString(),
    };
    try {
      await this.files.updateHandovers(st.id, (doc) => {
        doc.handovers[message.chatId] = handover;
        return { write: true, result: undefined };
      });
    } catch (err) {
      this.log.error({ instanceId: st.id, chatId: message.chatId, err: errorMessage(err) }, 'could not store the handover; the bot keeps answering this chat');
      return;
    }
    await this.refreshHandovers(st);
    this.log.info({ instanceId: st.id, chatId: message.chatId, node, expiresAt: handover.expiresAt }, 'conversation handed over to a person');
    const event: HandoverEvent = {
      type: 'conversation.handover',
      instanceId: st.id,
      timestamp: handover.openedAt,
      data: {
        chatId: handover.chatId,
        phone: handover.phone,
        flow: handover.flow,
        node,
        reason: 'flow',
        ...(handover.fromName ? { fromName: handover.fromName } : {}),
        ...(message.text !== undefined ? { text: message.text } : {}),
        expiresAt: handover.expiresAt,
      },
    };
    await this.deps.bus.publish(event).catch((err: unknown) => this.log.error({ err, instanceId: st.id }, 'could not publish conversation.handover'));
  }

  /** Removes the handovers of `st` that timed out at `now`. */
  private async expire(st: InstanceFlows, now: number): Promise<void> {
    if (![...st.handovers.values()].some((h) => !isOpen(h, now))) return;
    const expired = await this.files.updateHandovers(st.id, (doc) => {
      const gone: Handover[] = [];
      for (const [chatId, h] of Object.entries(doc.handovers)) {
        if (isOpen(h, now)) continue;
        delete doc.handovers[chatId];
        gone.push(h);
      }
      return { write: gone.length > 0, result: gone };
    });
    for (const h of expired) this.log.info({ instanceId: st.id, chatId: h.chatId, openedAt: h.openedAt }, 'handover timed out; the bot answers this chat again');
    await this.refreshHandovers(st);
  }

  /** After our own write: re-read even if the fingerprint happens to look unchanged. */
  private async refreshHandovers(st: InstanceFlows): Promise<void> {
    await st.refreshing;
    st.handoversIdentity = '';
    await this.refresh(st);
  }

  private async poll(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      const now = this.deps.clock.now();
      for (const st of [...this.states.values()]) {
        if (!this.deps.instances.get(st.id)) {
          // Deleted (its files went with it): forget it without writing anything back.
          this.states.delete(st.id);
          continue;
        }
        try {
          await this.refresh(st);
          await this.expire(st, now);
        } catch (err) {
          this.log.error({ instanceId: st.id, err: errorMessage(err) }, 'flow poll failed');
        }
      }
    } finally {
      this.polling = false;
    }
  }

  // ---- administration (REST routes) ----------------------------------------------------------

  /** Validates and stores a flow; throws FlowValidationError. */
  async setFlow(id: string, input: unknown): Promise<StoredFlow> {
    const flow = validateFlow(input);
    const stored = await this.files.writeFlow(id, flow, this.deps.clock.now());
    const st = this.states.get(id);
    if (st) await this.refresh(st);
    return stored;
  }

  async getFlow(id: string): Promise<StoredFlow | null> {
    return this.files.readFlow(id);
  }

  async clearFlow(id: string): Promise<boolean> {
    const existed = await this.files.clearFlow(id);
    const st = this.states.get(id);
    if (st) await this.refresh(st);
    return existed;
  }

  /** Open handovers, oldest first. */
  async listHandovers(id: string): Promise<Handover[]> {
    const st = await this.state(id);
    const now = this.deps.clock.now();
    return [...st.handovers.values()].filter((h) => isOpen(h, now)).sort((a, b) => a.openedAt.localeCompare(b.openedAt));
  }

  /** Releases `phone`'s handover; returns what was released (empty: none was open). */
  async release(id: string, phone: string): Promise<Handover[]> {
    const released = await this.files.releaseHandover(id, phone, this.deps.clock.now());
    const st = this.states.get(id);
    if (st) await this.refreshHandovers(st);
    for (const h of released) this.log.info({ instanceId: id, chatId: h.chatId }, 'handover released; the bot answers this chat again');
    return released;
  }
}
