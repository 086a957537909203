import protobuf from 'protobufjs/minimal.js';
import { proto } from '@whiskeysockets/baileys';

/**
 * Where Baileys looks for the daemon's history-sync decoder: `patches/` changes its Utils/history.js
 * to call the function under this key, `(bytes) => proto.HistorySync`, instead of
 * `proto.HistorySync.decode`. Without the function it runs as upstream.
 */
export const BAILEYS_HISTORY_DECODE_KEY = Symbol.for('wa-gateway.decodeHistorySync');

/**
 * What Baileys' `processHistoryMessage` (Utils/history.js) reads of a history message: its key (the
 * chat's contacts, `fromMe`), its timestamp (the chat's `lastMessageRecvTimestamp`), the stub type
 * and parameters (a business's verified name) and the user receipts (a LID chat's phone number).
 */
export interface LeanHistoryMessage {
  key: proto.IMessageKey | null;
  messageTimestamp?: number | Long;
  messageStubType?: number;
  messageStubParameters?: string[];
  userReceipt?: proto.IUserReceipt[];
}

type Long = ReturnType<protobuf.Reader['uint64']>;
type Reader = protobuf.Reader;

// Field numbers and wire types from Baileys' WAProto/WAProto.proto.
const LEN = 2;
const VARINT = 0;
const HISTORY_CONVERSATIONS = 2; // HistorySync.conversations
const CONVERSATION_MESSAGES = 2; // Conversation.messages
const HISTORY_MSG_MESSAGE = 1; // HistorySyncMsg.message (a WebMessageInfo)
const INFO_KEY = 1; // WebMessageInfo.key
const INFO_TIMESTAMP = 3; // WebMessageInfo.messageTimestamp (uint64)
const INFO_STUB_TYPE = 24; // WebMessageInfo.messageStubType (enum)
const INFO_STUB_PARAMETERS = 26; // WebMessageInfo.messageStubParameters (repeated string)
const INFO_USER_RECEIPT = 40; // WebMessageInfo.userReceipt (repeated UserReceipt)

/**
 * A history sync as `proto.HistorySync.decode` gives it, except that each message holds only what
 * Baileys' `processHistoryMessage` reads of it (`LeanHistoryMessage`): not its content, status,
 * push name, reactions and the rest. Everything else (the chats' fields, push names, LID mappings,
 * past participants, ...) is decoded by the generated decoders from a copy of its own bytes.
 *
 * Why: the gateway keeps a history set's contacts (contacts-events.ts) and drops its messages; the
 * phone's past is not part of its history store. The double's realistic RECENT sync (195 chats,
 * 1,975 messages) decoded whole is 9.5 to 10.8 ms and 1.79 MB of objects that live across the awaits of
 * the LID-mapping and tctoken writes, long enough to survive a scavenge or two; this way 6.7 ms and
 * 0.67 MB (bench/history-decode.ts, sampling profiler on). Most of the difference is each message's
 * `WebMessageInfo` (the generated class gives every instance ten arrays of its own, empty or not),
 * then its content (a `Message` and what it holds).
 *
 * Malformed bytes throw, as the generated decoder does (protobufjs' reader: "index out of range",
 * "invalid wire type"). The generated decoders get bytes, never this module's reader: they check
 * `instanceof Reader` against their own copy of protobufjs, which npm could one day install apart.
 */
export function decodeLeanHistorySync(bytes: Uint8Array): proto.HistorySync {
  const r = protobuf.Reader.create(bytes);
  const conversations: proto.IConversation[] = [];
  const rest = splitFields(r, r.len, HISTORY_CONVERSATIONS, (length) => conversations.push(conversation(r, bytes, length)));
  // A sync without conversations (push names, non-blocking data) is decoded as it is.
  if (conversations.length === 0) return proto.HistorySync.decode(bytes);
  const history = proto.HistorySync.decode(gather(bytes, rest));
  history.conversations = conversations;
  return history;
}

/** One conversation: its messages lean, its other fields by the generated decoder. */
function conversation(r: Reader, bytes: Uint8Array, length: number): proto.IConversation {
  const end = r.pos + length;
  const messages: proto.IHistorySyncMsg[] = [];
  const rest = splitFields(r, end, CONVERSATION_MESSAGES, (length) => messages.push(historyMessage(r, bytes, length)));
  if (r.pos !== end) throw new RangeError('a conversation of the history sync overruns its length');
  const chat = proto.Conversation.decode(gather(bytes, rest));
  chat.messages = messages;
  return chat;
}

function historyMessage(r: Reader, bytes: Uint8Array, length: number): proto.IHistorySyncMsg {
  const end = r.pos + length;
  let message: LeanHistoryMessage | null = null;
  while (r.pos < end) {
    const tag = r.uint32();
    if (tag >>> 3 === HISTORY_MSG_MESSAGE && (tag & 7) === LEN) message = webMessageInfo(r, bytes, r.uint32());
    else r.skipType(tag & 7);
  }
  // The shape processHistoryMessage reads; only this module makes it, so the cast names it, no more.
  return { message: message as proto.IWebMessageInfo | null };
}

function webMessageInfo(r: Reader, bytes: Uint8Array, length: number): LeanHistoryMessage {
  const end = r.pos + length;
  const m: LeanHistoryMessage = { key: null };
  while (r.pos < end) {
    const tag = r.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === INFO_KEY && wire === LEN) m.key = proto.MessageKey.decode(embedded(r, bytes));
    else if (field === INFO_TIMESTAMP && wire === VARINT) m.messageTimestamp = r.uint64();
    else if (field === INFO_STUB_TYPE && wire === VARINT) m.messageStubType = r.int32();
    else if (field === INFO_STUB_PARAMETERS && wire === LEN) (m.messageStubParameters ??= []).push(r.string());
    else if (field === INFO_USER_RECEIPT && wire === LEN) (m.userReceipt ??= []).push(proto.UserReceipt.decode(embedded(r, bytes)));
    else r.skipType(wire);
  }
  return m;
}

/** An embedded message's bytes (a view), the reader moved past them. */
function embedded(r: Reader, bytes: Uint8Array): Uint8Array {
  const length = r.uint32();
  const start = r.pos;
  r.skip(length);
  return bytes.subarray(start, start + length);
}

type Ranges = Array<[number, number]>;

/**
 * Walks a message's fields up to `end`: each `field` of wire type LEN goes to `take`, with the
 * reader at its bytes and their length (`take` reads them); the byte ranges of the other fields
 * are returned, for the generated decoder.
 */
function splitFields(r: Reader, end: number, field: number, take: (length: number) => void): Ranges {
  const rest: Ranges = [];
  while (r.pos < end) {
    const start = r.pos;
    const tag = r.uint32();
    if (tag >>> 3 === field && (tag & 7) === LEN) take(r.uint32());
    else {
      r.skipType(tag & 7);
      keep(rest, start, r.pos);
    }
  }
  return rest;
}

/** Adds a field's byte range, joined to the previous one when they touch. */
function keep(ranges: Ranges, start: number, end: number): void {
  const last = ranges.at(-1);
  if (last && last[1] === start) last[1] = end;
  else ranges.push([start, end]);
}

/** The bytes of the given fields, in order, as one message of their own (protobuf fields simply concatenate). */
function gather(bytes: Uint8Array, ranges: Readonly<Ranges>): Uint8Array {
  let size = 0;
  for (const [s, e] of ranges) size += e - s;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const [s, e] of ranges) {
    out.set(bytes.subarray(s, e), at);
    at += e - s;
  }
  return out;
}

/**
 * Makes Baileys decode history syncs with `decodeLeanHistorySync` (the gateway drops their
 * messages). Bytes it refuses go to the generated decoder, whose answer (or error) stands: Baileys
 * has marked the sync processed before it downloads it, so a sync lost here is not sent again.
 */
export function installLeanHistoryDecode(): void {
  (globalThis as Record<symbol, unknown>)[BAILEYS_HISTORY_DECODE_KEY] = (bytes: Uint8Array): proto.HistorySync => {
    try {
      return decodeLeanHistorySync(bytes);
    } catch {
      return proto.HistorySync.decode(bytes);
    }
  };
}
