import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { GatewayError, errorMessage } from '../domain/errors.js';
import { isE164 } from '../domain/phone.js';
import type { InboundMessage } from '../schemas/events.js';
import type { EventBus } from '../events/bus.js';
import type { EventConsumer, GatewayEvent, HandoverEvent } from '../events/types.js';
import type { SendService } from '../sending/send-service.js';
import { isInstanceId } from '../domain/ids.js';
import { matchInput } from './compiled.js';
import type { ConversationBook } from './conversations.js';
import type { FlowDefinitions } from './definitions.js';
import { runFlow } from './engine.js';
import type { HandoverBook } from './handovers.js';
import { KeyedQueue } from './keyed-queue.js';
import { RegexMatcher } from './regex-matcher.js';
import { FLOW_LIMITS } from './types.js';

export interface FlowRunnerDeps {
  definitions: FlowDefinitions;
  handovers: HandoverBook;
  conversations: ConversationBook;
  sender: SendService;
  bus: EventBus;
  clock: Clock;
  logger: Logger;
  handoverTimeoutMinutes: number;
  /** Inbound messages waiting per chat; past it new ones are dropped (with a log line). */
  maxPendingPerChat: number;
  exists(instanceId: string): boolean;
}

/**
 * Runs each instance's flow on inbound messages: one chat at a time in arrival order, replies
 * through the SendService (so they cost credits), and a handover that mutes the chat until it is
 * released or times out.
 */
export class FlowRunner implements EventConsumer {
  readonly name = 'flows';
  private readonly queue: KeyedQueue;
  /** Flow regexes run on a worker thread within a time budget per message (regex-matcher.ts). */
  private readonly matcher: RegexMatcher;
  private stopped = false;

  constructor(private readonly deps: FlowRunnerDeps) {
    this.queue = new KeyedQueue(deps.maxPendingPerChat, (err, key) => deps.logger.error({ err, chat: key }, 'flow step failed'));
    this.matcher = new RegexMatcher({
      budgetMs: FLOW_LIMITS.matchBudgetMs,
      limits: { repeat: FLOW_LIMITS.regexRepeat, program: FLOW_LIMITS.regexProgram, span: FLOW_LIMITS.regexSpan },
      logger: deps.logger,
    });
  }

  async handle(event: GatewayEvent): Promise<void> {
    if (event.type !== 'message.received' || this.stopped) return;
    const { instanceId, data } = event;
    // Groups are left to people: a bot menu in a group would answer everyone. A sender known only
    // by a LID cannot be answered by phone either; the flow waits until its number is known.
    if (data.isGroup || data.from === null || !isE164(data.from) || !isInstanceId(instanceId)) return;
    // Not awaited: the connection's acknowledgement must not wait for paced bot replies.
    const from = data.from;
    const queued = this.queue.push(`${instanceId}/${data.chatId}`, () => this.step(instanceId, { ...data, from }));
    if (!queued) this.deps.logger.warn({ instanceId, chatId: data.chatId }, 'too many messages waiting in this chat; the bot skips this one');
  }

  /** Resolves once every queued inbound message has been handled. */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.race([this.queue.idle(), new Promise((r) => setTimeout(r, 10_000).unref())]);
    await this.matcher.stop();
  }

  private async step(instanceId: string, message: InboundMessage & { from: string }): Promise<void> {
    const { definitions, handovers, conversations, clock } = this.deps;
    if (this.stopped || !this.deps.exists(instanceId)) return;
    const compiled = await definitions.compiled(instanceId);
    if (!compiled) return;
    const log = this.deps.logger.child({ instanceId, chatId: message.chatId });
    if (await handovers.openFor(instanceId, message.chatId)) {
      log.debug('chat is handed over to a person; the bot stays silent');
      return;
    }
    const now = clock.now();
    const conversation = await conversations.get(instanceId, message.chatId);
    const position = conversation && conversation.revision === compiled.revision ? conversation.node : null;
    const input = { text: matchInput(message.text ?? message.caption), name: message.fromName ?? '', phone: message.from };
    const plan = await runFlow(compiled, position, input, (patterns, text) => this.matcher.first(instanceId, patterns, text));
    if (plan.capped) log.warn({ flow: compiled.flow.name }, 'flow run stopped at the step limit; the conversation starts over');
    // Never the message: it is the hostile part, and bodies stay out of logs.
    const trouble = plan.regexTrouble;
    if (trouble?.kind === 'budget') {
      log.warn({ flow: compiled.flow.name, node: trouble.node, rule: trouble.rule, budgetMs: FLOW_LIMITS.matchBudgetMs }, 'flow regex ran out of its time budget; this rule and the regex rules after it count as not matched');
    } else if (trouble?.kind === 'failed') {
      log.error({ flow: compiled.flow.name, node: trouble.node, rule: trouble.rule, reason: trouble.reason }, 'flow regexes could not be matched; they count as not matched');
    }

    for (const text of plan.sends) {
      try {
        await this.deps.sender.send(instanceId, { kind: 'text', to: message.chatId, text });
      } catch (err) {
        const code = err instanceof GatewayError ? err.code : 'INTERNAL';
        // Silent, and the conversation keeps the place it had before this message.
        log.warn({ code, reason: errorMessage(err), node: position ?? compiled.flow.start }, 'bot reply not sent; the conversation keeps its place');
        return;
      }
    }
    const next = plan.position === null ? null : { phone: message.from, node: plan.position, revision: compiled.revision, updatedAt: new Date(now).toISOString() };
    await conversations.set(instanceId, message.chatId, next);
    if (plan.handover) await this.openHandover(instanceId, compiled.flow.name, message, plan.handover.node, now);
  }

  private async openHandover(instanceId: string, flow: string, message: InboundMessage & { from: string }, node: string, now: number): Promise<void> {
    const handover = {
      chatId: message.chatId,
      phone: message.from,
      ...(message.fromName ? { fromName: message.fromName } : {}),
      flow,
      node,
      openedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.deps.handoverTimeoutMinutes * 60_000).toISOString(),
    };
    try {
      await this.deps.handovers.open(instanceId, handover);
    } catch (err) {
      this.deps.logger.error({ instanceId, chatId: message.chatId, err: errorMessage(err) }, 'could not store the handover; the bot keeps answering this chat');
      return;
    }
    this.deps.logger.info({ instanceId, chatId: message.chatId, node, expiresAt: handover.expiresAt }, 'conversation handed over to a person');
    const event: HandoverEvent = {
      type: 'conversation.handover',
      instanceId,
      timestamp: handover.openedAt,
      data: {
        chatId: handover.chatId,
        phone: handover.phone,
        flow,
        node,
        reason: 'flow',
        ...(handover.fromName ? { fromName: handover.fromName } : {}),
        ...(message.text !== undefined ? { text: message.text } : {}),
        expiresAt: handover.expiresAt,
      },
    };
    await this.deps.bus.publish(event).catch((err: unknown) => this.deps.logger.error({ err, instanceId }, 'could not publish conversation.handover'));
  }
}
