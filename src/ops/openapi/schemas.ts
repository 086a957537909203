import { ERROR_STATUS, type ErrorCode } from '../../domain/errors.js';
import { INSTANCE_STATUSES, WEBHOOK_EVENTS } from '../../domain/types.js';
import { INSTANCE_ID_PATTERN } from '../../store/paths.js';
import { flowSchemas } from './flow-schemas.js';
import { isoTime, obj, phone, ref, str, success } from './helpers.js';
import type { SchemaObject } from './types.js';

/** Codes answered with `status`, from the one code-to-status table. */
export function codesFor(status: number): ErrorCode[] {
  return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
}

/** Every status the error table uses, in ascending order. */
export function errorStatuses(): number[] {
  return [...new Set(Object.values(ERROR_STATUS))].sort((a, b) => a - b);
}

function errorSchema(status: number): SchemaObject {
  return {
    description: `The error body for HTTP ${status}.`,
    allOf: [ref('Error'), { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: codesFor(status) } } } } }],
  };
}

const sendResult: Record<string, SchemaObject> = {
  success,
  instanceId: ref('InstanceId'),
  messageId: str('WhatsApp message id of the sent message.'),
  quotaRemaining: ref('QuotaRemaining'),
};

/** Component schemas: request and response bodies, the error body and webhook payloads. */
export function componentSchemas(): Record<string, SchemaObject> {
  const schemas: Record<string, SchemaObject> = {
    Error: {
      type: 'object',
      description: 'Every error has this body; match on `error.code`, never on the message.',
      properties: {
        success: { const: false },
        error: obj({ code: ref('ErrorCode'), message: str('Human-readable; may change between versions.') }, ['code', 'message']),
      },
      required: ['success', 'error'],
    },
    ErrorCode: {
      type: 'string',
      description: Object.entries(ERROR_STATUS)
        .map(([code, status]) => `${code} (${status})`)
        .join(', '),
      enum: Object.keys(ERROR_STATUS),
    },
    InstanceId: str('Instance id.', { pattern: INSTANCE_ID_PATTERN.source, examples: ['inst_Xk3v9QpLm2Tz'] }),
    InstanceStatus: { type: 'string', enum: [...INSTANCE_STATUSES] },
    ConnectionStatus: { type: 'string', enum: INSTANCE_STATUSES.filter((s) => s !== 'requires_premium') },
    QuotaRemaining: str('Credit balance as a decimal string, or "unlimited" while premium.', { pattern: '^(0|[1-9][0-9]*|unlimited)$', examples: ['41', 'unlimited'] }),
    Phone: phone('E.164: "+", then 7 to 15 digits, the first not 0.'),
    WebhookEventType: { type: 'string', enum: [...WEBHOOK_EVENTS] },
    Health: obj({ ok: { const: true } }, ['ok']),

    SendRequest: obj({ phone: ref('Phone'), message: str('Text to send.', { minLength: 1, maxLength: 65_536 }) }, ['phone', 'message']),
    SendResponse: obj(sendResult, ['success', 'instanceId', 'messageId', 'quotaRemaining']),
    SendMediaRequest: obj(
      {
        file: { type: 'string', contentMediaType: 'application/octet-stream', description: 'The file; at most media.maxBytes (default 16 MiB). Its type is detected from its content.' },
        phone: ref('Phone'),
        caption: str('Optional caption.', { maxLength: 4096 }),
      },
      ['file', 'phone'],
    ),
    SendMediaResponse: obj(
      { ...sendResult, mediaType: { type: 'string', enum: ['image', 'video', 'audio', 'document'] } },
      ['success', 'instanceId', 'messageId', 'quotaRemaining', 'mediaType'],
    ),

    StatusResponse: obj(
      {
        success,
        instanceId: ref('InstanceId'),
        status: ref('InstanceStatus'),
        premium: { type: 'boolean' },
        premiumUntil: { type: ['string', 'null'], format: 'date-time' },
        quotaRemaining: ref('QuotaRemaining'),
        reason: { type: ['string', 'null'], description: 'Why the instance is in this status, when known.' },
      },
      ['success', 'instanceId', 'status', 'premium', 'premiumUntil', 'quotaRemaining'],
    ),
    QrResponse: obj(
      {
        success,
        instanceId: ref('InstanceId'),
        status: { const: 'qr_code_generated' },
        qr: str('Raw QR payload; render it yourself or use qrImage.'),
        qrImage: str('PNG data URL of the QR.', { pattern: '^data:image/png;base64,' }),
      },
      ['success', 'instanceId', 'status', 'qr', 'qrImage'],
    ),

    CreateInstanceRequest: obj(
      {
        name: str('Display name.', { maxLength: 100 }),
        owner: str('Owner (reseller customer); the first instance of an owner gets the premium trial once. Absent: one shared default owner.', { maxLength: 100 }),
        sandbox: { type: 'boolean', description: 'Simulated connection for integration tests.', default: false },
        webhookUrl: str('Where events are delivered.', { maxLength: 2048, format: 'uri' }),
        webhookSecret: str('Signing secret; whsec_<base64> for Standard Webhooks verifiers. Needs webhookUrl.', { maxLength: 512 }),
        credits: { type: 'integer', minimum: 0, description: 'Starting credits (plus plans.initialCredits).' },
      },
      [],
    ),
    CreateInstanceResponse: obj(
      {
        success,
        instanceId: ref('InstanceId'),
        apiKey: str('The instance API key (X-API-Key). Shown only here; only its hash is stored.'),
        status: ref('InstanceStatus'),
        premium: { type: 'boolean' },
        premiumUntil: { type: ['string', 'null'], format: 'date-time' },
        quotaRemaining: ref('QuotaRemaining'),
      },
      ['success', 'instanceId', 'apiKey', 'status', 'premium', 'premiumUntil', 'quotaRemaining'],
    ),

    WebhookRequest: obj(
      {
        url: str('Receiver URL (http or https). Private and loopback targets are refused unless webhooks.allowPrivateTargets.', { maxLength: 2048, format: 'uri' }),
        secret: str('Signing secret; absent: deliveries are not signed.', { maxLength: 512 }),
        events: { type: ['array', 'null'], items: ref('WebhookEventType'), description: 'Event types to deliver; absent or null: all.' },
      },
      ['url'],
    ),
    WebhookResponse: obj(
      {
        success,
        instanceId: ref('InstanceId'),
        webhook: obj(
          {
            url: { type: 'string' },
            signed: { type: 'boolean' },
            events: { oneOf: [{ const: 'all' }, { type: 'array', items: ref('WebhookEventType') }] },
          },
          ['url', 'signed', 'events'],
        ),
      },
      ['success', 'instanceId', 'webhook'],
    ),

    SandboxStatusResponse: obj({ success, instanceId: ref('InstanceId'), status: ref('ConnectionStatus') }, ['success', 'instanceId', 'status']),
    SandboxInboundRequest: obj(
      { from: ref('Phone'), message: str('Text the simulated contact sends.', { minLength: 1, maxLength: 65_536 }), name: str('Sender push name.', { maxLength: 256 }) },
      ['from', 'message'],
    ),
    SandboxInboundResponse: obj({ success, instanceId: ref('InstanceId'), messageId: { type: 'string' } }, ['success', 'instanceId', 'messageId']),
    SandboxSentMessage: obj(
      {
        messageId: { type: 'string' },
        phone: ref('Phone'),
        type: { type: 'string', enum: ['text', 'image', 'video', 'audio', 'document', 'other'] },
        message: { type: 'string' },
        caption: { type: 'string' },
        sentAt: isoTime('When it was sent.'),
      },
      ['messageId', 'phone', 'type', 'sentAt'],
    ),
    SandboxSentResponse: obj(
      { success, instanceId: ref('InstanceId'), messages: { type: 'array', items: ref('SandboxSentMessage'), description: 'Oldest first, bounded.' } },
      ['success', 'instanceId', 'messages'],
    ),

  };
  for (const status of errorStatuses()) schemas[`Error${status}`] = errorSchema(status);
  Object.assign(schemas, webhookPayloadSchemas(), flowSchemas());
  return schemas;
}

function event(type: string, data: SchemaObject): SchemaObject {
  return obj(
    { type: { const: type }, timestamp: isoTime('When the gateway saw the event.'), instanceId: ref('InstanceId'), data },
    ['type', 'timestamp', 'instanceId', 'data'],
  );
}

/** Bodies the gateway POSTs to an instance's webhook URL (Standard Webhooks). */
function webhookPayloadSchemas(): Record<string, SchemaObject> {
  return {
    MessageReceivedEvent: event(
      'message.received',
      obj(
        {
          messageId: { type: 'string' },
          from: phone('Sender.'),
          fromName: str('Sender push name, when known.'),
          chatId: str('Chat the message belongs to (a group for group messages).'),
          isGroup: { type: 'boolean' },
          type: { type: 'string', enum: ['text', 'image', 'video', 'audio', 'document', 'other'] },
          text: { type: 'string' },
          caption: { type: 'string' },
          timestamp: isoTime('When the message was sent.'),
        },
        ['messageId', 'from', 'chatId', 'isGroup', 'type', 'timestamp'],
      ),
    ),
    InstanceStatusEvent: event('instance.status', obj({ from: ref('InstanceStatus'), to: ref('InstanceStatus'), reason: { type: ['string', 'null'] } }, ['from', 'to', 'reason'])),
    QrUpdatedEvent: event('qr.updated', obj({ qr: str('Raw QR payload to render.') }, ['qr'])),
    HandoverEvent: event(
      'conversation.handover',
      obj({ chatId: { type: 'string' }, phone: ref('Phone'), flow: str('Flow name.'), node: str('Handover node.'), reason: { type: 'string' } }, ['chatId', 'phone', 'flow', 'node', 'reason']),
    ),
  };
}
