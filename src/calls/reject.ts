import type { Logger } from 'pino';
import type { ConnectionActions, OutgoingDraft } from '../connection/types.js';
import type { EventConsumer } from '../events/types.js';
import type { SendResult } from '../sending/send-service.js';
import type { CallReceivedData } from '../schemas/account-events.js';
import type { Static } from 'typebox';

type CallReceived = Static<typeof CallReceivedData>;

/** What rejecting a call needs: the live connection, and the send service for the text after it. */
export interface CallRejectParts {
  sender: ConnectionActions & { send(instanceId: string, draft: OutgoingDraft): Promise<SendResult> };
}

/** The chat a text to the caller goes to: their own chat, also for a group call. */
function callerChat(call: CallReceived): string {
  return call.from !== null ? `${call.from.slice(1)}@s.whatsapp.net` : call.sender;
}

/**
 * Rejects a call and, when `message` is given, then writes it to the caller (a text: one credit,
 * through the send service like any send). Resolves with whether the call was still known and the
 * text's message id; a text that cannot be sent (no credits, not connected) rejects after the call
 * was rejected.
 */
export async function rejectCall(parts: CallRejectParts, instanceId: string, call: CallReceived, message?: string): Promise<{ rejected: boolean; messageId?: string }> {
  const rejected = await parts.sender.act(instanceId, (c) => c.rejectCall(call.callId), { paced: false });
  if (message === undefined || message === '') return { rejected };
  const sent = await parts.sender.send(instanceId, { kind: 'text', to: callerChat(call), text: message });
  return { rejected, messageId: sent.messageId };
}

/** The instance's setting `calls.autoReject` (with `calls.rejectMessage`); null or false: calls ring. */
export type AutoRejectSetting = (instanceId: string) => { autoReject: boolean; rejectMessage?: string | undefined } | null;

/**
 * Rejects every offered call of the instances whose setting says so, and writes them the reject
 * message when there is one. Runs beside the event's delivery: a slow or failed reject never holds
 * up the webhook of the call.
 */
export function autoRejectConsumer(parts: CallRejectParts & { logger: Logger; setting: AutoRejectSetting }): EventConsumer {
  return {
    name: 'calls.auto-reject',
    async handle(event) {
      if (event.type !== 'call.received') return;
      const setting = parts.setting(event.instanceId);
      if (!setting?.autoReject) return;
      rejectCall(parts, event.instanceId, event.data, setting.rejectMessage).catch((err: unknown) =>
        parts.logger.warn({ err, instanceId: event.instanceId, callId: event.data.callId }, 'could not auto-reject a call (or send its reject message)'),
      );
    },
  };
}
