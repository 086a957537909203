import Type from 'typebox';
import { ChatId, Phone, closed } from './common.js';
import { GROUP_ACTIONS } from './account-events.js';

/** Someone to add to (or change in) a group: an E.164 number, a phone JID or a LID. */
export const ParticipantRef = Type.String({
  pattern: '^(\\+[1-9][0-9]{6,14}|[1-9][0-9]{4,19}@s\\.whatsapp\\.net|[0-9]{5,25}@lid)$',
  description: 'An E.164 number, a phone JID or a LID.',
  examples: ['+15551234567'],
});

const Participants = Type.Array(ParticipantRef, { minItems: 1, maxItems: 256, uniqueItems: true });

export const PARTICIPANT_STATUSES = ['added', 'invited', 'not_on_whatsapp', 'removed', 'promoted', 'demoted', 'already_in_group', 'not_in_group', 'failed'] as const;

export const ParticipantResultSchema = closed({
  jid: Type.String(),
  phone: Type.Optional(Phone),
  status: Type.Enum([...PARTICIPANT_STATUSES], {
    description: '`invited`: WhatsApp refused a direct add (the person\'s privacy settings), so an invite link was sent to them instead.',
  }),
  error: Type.Optional(Type.String({ description: 'Why it failed (`failed` only).' })),
});

export const Subject = Type.String({ minLength: 1, maxLength: 100, description: 'The group name (WhatsApp allows 100 characters).' });

export const CreateGroupInput = closed({ subject: Subject, participants: Participants });

export const CreateGroupBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  subject: Type.String(),
  participants: Type.Array(ParticipantResultSchema),
});

export const UpdateGroupInput = closed({
  subject: Type.Optional(Subject),
  description: Type.Optional(Type.String({ maxLength: 2048, description: '"" removes the description.' })),
  announce: Type.Optional(Type.Boolean({ description: 'Only admins may write.' })),
  locked: Type.Optional(Type.Boolean({ description: 'Only admins may change the group info.' })),
});

export const UpdateGroupBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  subject: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  announce: Type.Optional(Type.Boolean()),
  locked: Type.Optional(Type.Boolean()),
});

export const ParticipantsInput = closed({ action: Type.Enum([...GROUP_ACTIONS]), participants: Participants });

export const ParticipantsBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  action: Type.Enum([...GROUP_ACTIONS]),
  participants: Type.Array(ParticipantResultSchema),
});

export const InviteBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  code: Type.String(),
  url: Type.String({ description: 'The invite link.' }),
});

export const JoinInput = closed({
  code: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: '^(https://chat\\.whatsapp\\.com/)?[A-Za-z0-9]{6,64}$',
    description: 'The invite code, or the whole link (https://chat.whatsapp.com/CODE).',
  }),
});

export const GroupChatBody = closed({ success: Type.Literal(true), instanceId: Type.String(), chatId: ChatId });

export const PictureBody = closed({
  success: Type.Literal(true),
  instanceId: Type.String(),
  chatId: ChatId,
  picture: Type.Boolean({ description: 'Whether the group has a picture now.' }),
});

export const PictureFields = closed({});

/** https://chat.whatsapp.com/CODE */
export function inviteUrl(code: string): string {
  return `https://chat.whatsapp.com/${code}`;
}
