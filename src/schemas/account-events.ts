import Type, { type Static } from 'typebox';
import { ChatId, IsoTime, MessageId, Phone, closed } from './common.js';

/**
 * The data of what happens around an account besides messages (groups, calls, presence, poll votes):
 * the events of contract part 3. A person is `{jid, phone?}`: the JID (or LID) WhatsApp named, with
 * the E.164 phone next to it whenever the gateway knows it.
 */
export const Person = closed(
  {
    jid: Type.String({ description: 'The JID or LID WhatsApp named.', examples: ['15551234567@s.whatsapp.net'] }),
    phone: Type.Optional(Phone),
  },
  { description: 'A person: their JID (or LID), and their phone when known.' },
);
export type PersonT = Static<typeof Person>;

const By = Type.Union([Person, Type.Null()], { description: 'Who did it (null when WhatsApp did not say).' });

export const GROUP_ACTIONS = ['add', 'remove', 'promote', 'demote'] as const;

export const GroupJoinedData = closed({
  chatId: ChatId,
  subject: Type.Optional(Type.String()),
  by: By,
  timestamp: IsoTime,
});

export const GroupUpdatedData = closed({
  chatId: ChatId,
  subject: Type.Optional(Type.String()),
  description: Type.Optional(Type.String({ description: '"" when the description was removed.' })),
  announce: Type.Optional(Type.Boolean({ description: 'Only admins may write.' })),
  locked: Type.Optional(Type.Boolean({ description: 'Only admins may change the group info.' })),
  by: By,
  timestamp: IsoTime,
});

export const GroupParticipantsData = closed({
  chatId: ChatId,
  action: Type.Enum([...GROUP_ACTIONS], { description: 'What happened to them (leaving is `remove` by themselves).' }),
  participants: Type.Array(Person),
  by: By,
  timestamp: IsoTime,
});

export const CallReceivedData = closed({
  callId: Type.String({ description: 'Pass it to POST /api/{id}/calls/{callId}/reject.' }),
  chatId: ChatId,
  from: Type.Union([Phone, Type.Null()], { description: "The caller's phone, or null when WhatsApp gave only a LID the gateway cannot map." }),
  sender: Type.String({ description: "The caller's JID or LID." }),
  isVideo: Type.Boolean(),
  isGroup: Type.Boolean(),
  timestamp: IsoTime,
});

export const PRESENCE_STATES = ['available', 'unavailable', 'typing', 'recording', 'paused'] as const;

export const PresenceUpdatedData = closed({
  chatId: ChatId,
  from: Type.Union([Phone, Type.Null()], { description: "The person's phone, or null when WhatsApp gave only a LID the gateway cannot map." }),
  sender: Type.String({ description: "The person's JID or LID." }),
  state: Type.Enum([...PRESENCE_STATES]),
  lastSeen: Type.Optional(IsoTime),
});

export const PollVoteData = closed({
  chatId: ChatId,
  pollMessageId: MessageId,
  voter: Person,
  selected: Type.Array(Type.String(), { description: 'The option texts the voter picked now ([] withdrew their vote).' }),
  timestamp: IsoTime,
});

/** What a poll's votes look like on GET /messages/{messageId}: each option with who picked it. */
export const PollVotes = Type.Record(Type.String(), Type.Array(Person), { description: 'Each option with the people who picked it (their latest vote counts).' });

/** Events a connection reports besides messages (the daemon publishes them as they are). */
export type AccountEvent =
  | { type: 'group.joined'; data: Static<typeof GroupJoinedData> }
  | { type: 'group.updated'; data: Static<typeof GroupUpdatedData> }
  | { type: 'group.participants'; data: Static<typeof GroupParticipantsData> }
  | { type: 'call.received'; data: Static<typeof CallReceivedData> }
  | { type: 'presence.updated'; data: Static<typeof PresenceUpdatedData> };

export type PresenceState = (typeof PRESENCE_STATES)[number];
export type GroupAction = (typeof GROUP_ACTIONS)[number];
