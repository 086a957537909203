import Type, { type Static } from 'typebox';
import { matches } from '../../../schemas/check.js';
import { closed } from '../../../schemas/common.js';
import { EventTypeSchema } from '../../../schemas/instance.js';
import { DeliveryStatusSchema } from '../../../schemas/webhook.js';
import { DELIVERY_ID_PATTERN, type DeliveryPatch, type DeliveryRecord } from '../../ports/outbox.js';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** The state fields of a delivery, as a `s` line of the journal carries them (see ports/outbox.ts). */
const DeliveryStateFields = {
  seq: Type.Integer({ minimum: 0 }),
  status: DeliveryStatusSchema,
  attempts: Type.Integer({ minimum: 0 }),
  lastAttemptAt: NullableString,
  lastError: NullableString,
  lastStatus: Type.Union([Type.Integer(), Type.Null()]),
  nextAttemptAt: NullableString,
  deliveredAt: NullableString,
  finishedAt: NullableString,
  redeliveries: Type.Integer({ minimum: 0 }),
};

/**
 * The event as stored: the exact body every attempt sends. Checked loosely (its data was checked
 * when the event happened, and older versions may have stored fields since renamed).
 */
const StoredEventSchema = Type.Object({
  type: EventTypeSchema,
  instanceId: Type.String(),
  timestamp: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
});

/**
 * One delivery as a `d` line of `DATA_DIR/outbox/<instanceId>/outbox.jsonl` (and, before the
 * journal, as one file `<id>.json` per delivery, which a start migrates). Unknown fields are
 * allowed, so a record written by a newer version still loads.
 */
export const DeliveryRecordSchema = Type.Object({
  v: Type.Literal(1),
  id: Type.String({ pattern: DELIVERY_ID_PATTERN.source }),
  instanceId: Type.String(),
  type: EventTypeSchema,
  lane: Type.String(),
  createdAt: Type.String(),
  ...DeliveryStateFields,
  event: StoredEventSchema,
});

/** A `s` line: the new state of a delivery already in the journal. */
export const DeliveryPatchSchema = closed({ id: Type.String({ pattern: DELIVERY_ID_PATTERN.source }), ...DeliveryStateFields });

// The schemas describe the port's types exactly (a change to one without the other fails the build).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const patchMatches: Same<Static<typeof DeliveryPatchSchema>, DeliveryPatch> = true;
const recordMatches: Same<Omit<Static<typeof DeliveryRecordSchema>, 'event'>, Omit<DeliveryRecord, 'event'>> = true;
void patchMatches;
void recordMatches;

/** Shape check for a stored delivery; a foreign or hand-edited one is skipped, not trusted. */
export function isDeliveryRecord(v: unknown): v is DeliveryRecord {
  return matches(DeliveryRecordSchema, v) && v.event.type === v.type && v.event.instanceId === v.instanceId;
}
