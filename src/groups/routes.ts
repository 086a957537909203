import { readFile } from 'node:fs/promises';
import type { ConnectionActions } from '../connection/types.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { withUpload } from '../http/upload.js';
import { detectMedia } from '../media/media-type.js';
import { CHAT_ID_PATTERN } from '../schemas/common.js';
import {
  CreateGroupBody,
  CreateGroupInput,
  GroupChatBody,
  InviteBody,
  JoinInput,
  ParticipantsBody,
  ParticipantsInput,
  PictureBody,
  PictureFields,
  UpdateGroupBody,
  UpdateGroupInput,
  inviteUrl,
} from '../schemas/groups.js';
import type { GroupSettings } from '../connection/account-types.js';

/** What the group routes are built from. */
export interface GroupParts {
  /** The live connection; creation and participant changes wait their turn in the anti-ban queue. */
  sender: ConnectionActions;
  /** Largest picture accepted (`media.maxBytes`). */
  maxPictureBytes: number;
}

const CHAT_ID = new RegExp(CHAT_ID_PATTERN);
const GROUP = '120363041234567890@g.us';
const ERRORS = ['MISSING_FIELD', 'INVALID_FIELD', 'CONNECTION_NOT_READY', 'RATE_LIMITED'] as const;
const ON_A_GROUP = [...ERRORS, 'NOT_FOUND', 'NOT_GROUP_ADMIN'] as const;

function groupId(chatId: string | undefined): string {
  if (!chatId || !CHAT_ID.test(chatId) || !chatId.endsWith('@g.us')) throw new GatewayError('INVALID_FIELD', 'chatId: expected a group id, <id>@g.us');
  return chatId;
}

/**
 * Groups: create one, change its info and settings, its participants, its invite link and
 * picture, join one by invite, leave one. Free; creating and changing participants (joining and
 * leaving too) wait their turn in the anti-ban queue, as WhatsApp bans bursts of them.
 */
export function groupRoutes(core: GroupParts): RouteDef[] {
  const common = { auth: 'instance' as const, tags: ['groups'] };
  const invite = (method: 'GET' | 'DELETE') =>
    defineRoute({
      ...common,
      method,
      path: '/api/:id/groups/:chatId/invite',
      operationId: method === 'GET' ? 'getGroupInvite' : 'resetGroupInvite',
      summary: method === 'GET' ? "The group's invite link (admins only)" : 'Reset the invite link: the old one stops working; answers the new one (admins only)',
      response: { description: 'The invite link.', schema: InviteBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: GROUP, code: 'F4kQ2mVb7nK3J9xQ2mVb7n', url: 'https://chat.whatsapp.com/F4kQ2mVb7nK3J9xQ2mVb7n' } },
      errors: ON_A_GROUP,
      async handle({ instance, params }) {
        const chatId = groupId(params.chatId);
        const code = await core.sender.act(instance.id, (c) => c.groupInvite(chatId, method === 'DELETE'), { paced: false });
        return { success: true, instanceId: instance.id, chatId, code, url: inviteUrl(code) };
      },
    });
  const picture = (method: 'PUT' | 'DELETE') =>
    defineRoute({
      ...common,
      method,
      path: '/api/:id/groups/:chatId/picture',
      operationId: method === 'PUT' ? 'setGroupPicture' : 'removeGroupPicture',
      summary: method === 'PUT' ? "Set the group's picture (multipart `file`: a JPEG, PNG or WebP image)" : "Remove the group's picture",
      ...(method === 'PUT'
        ? { description: 'WhatsApp shows it square: the gateway crops and scales it to 640x640 JPEG. Admins only in a locked group.', multipart: PictureFields, example: {} }
        : { description: 'Admins only in a locked group.' }),
      response: { description: 'Done.', schema: PictureBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: GROUP, picture: method === 'PUT' } },
      errors: method === 'PUT' ? [...ON_A_GROUP, 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] : ON_A_GROUP,
      async handle({ koa, instance, params }) {
        const chatId = groupId(params.chatId);
        if (method === 'DELETE') {
          await core.sender.act(instance.id, (c) => c.groupPicture(chatId, null), { paced: false });
          return { success: true, instanceId: instance.id, chatId, picture: false };
        }
        return withUpload(koa, core.maxPictureBytes, async (file, fields) => {
          const extra = Object.keys(fields)[0];
          if (extra !== undefined) throw new GatewayError('INVALID_FIELD', `${extra.slice(0, 40)}: unknown field`);
          if (!file) throw new GatewayError('MISSING_FIELD', 'file is required');
          const detected = await detectMedia(file.filepath, file.mimetype);
          if (!['image/jpeg', 'image/png', 'image/webp'].includes(detected.mimetype)) throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `file: a JPEG, PNG or WebP image is needed (got ${detected.mimetype})`);
          const bytes = await readFile(file.filepath);
          await core.sender.act(instance.id, (c) => c.groupPicture(chatId, bytes), { paced: false });
          return { success: true, instanceId: instance.id, chatId, picture: true };
        });
      },
    });

  return [
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/groups',
      operationId: 'createGroup',
      summary: 'Create a group with the account as its admin',
      description:
        'Each participant is reported: `added`; `invited` when their privacy settings refused a direct add (WhatsApp then lets the gateway send them an invite link, which it does); `not_on_whatsapp`. Free; waits its turn in the anti-ban queue.',
      status: 201,
      body: CreateGroupInput,
      example: { subject: 'Support team', participants: ['+15551234567', '+15557654321'] },
      response: {
        description: 'Created.',
        schema: CreateGroupBody,
        example: {
          success: true,
          instanceId: 'inst_k3J9xQ2mVb7n',
          chatId: GROUP,
          subject: 'Support team',
          participants: [
            { jid: '15551234567@s.whatsapp.net', phone: '+15551234567', status: 'added' },
            { jid: '15557654321@s.whatsapp.net', phone: '+15557654321', status: 'invited' },
          ],
        },
      },
      errors: [...ERRORS, 'INVALID_PHONE'],
      async handle({ instance, body }) {
        const created = await core.sender.act(instance.id, (c) => c.createGroup(body.subject, body.participants), { paced: true });
        return { success: true, instanceId: instance.id, ...created };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/groups/join',
      operationId: 'joinGroup',
      summary: 'Join a group by its invite code or link',
      description: 'Waits its turn in the anti-ban queue. 404 for an unknown or reset code.',
      body: JoinInput,
      example: { code: 'https://chat.whatsapp.com/F4kQ2mVb7nK3J9xQ2mVb7n' },
      response: { description: 'Joined.', schema: GroupChatBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: GROUP } },
      errors: [...ERRORS, 'NOT_FOUND'],
      async handle({ instance, body }) {
        const code = body.code.replace(/^https:\/\/chat\.whatsapp\.com\//, '');
        const chatId = await core.sender.act(instance.id, (c) => c.joinGroup(code), { paced: true });
        return { success: true, instanceId: instance.id, chatId };
      },
    }),
    defineRoute({
      ...common,
      method: 'PUT',
      path: '/api/:id/groups/:chatId',
      operationId: 'updateGroup',
      summary: "Change a group's subject, description, and who may write (announce) or edit its info (locked)",
      description: 'Fields left out keep their value; `"description": ""` removes it. `announce` and `locked` need an admin, and so does the rest in a locked group (403 NOT_GROUP_ADMIN).',
      body: UpdateGroupInput,
      example: { subject: 'Support team (EU)', description: 'Questions about orders', announce: false, locked: true },
      response: { description: 'Changed.', schema: UpdateGroupBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: GROUP, subject: 'Support team (EU)', locked: true } },
      errors: ON_A_GROUP,
      async handle({ instance, params, body }) {
        const chatId = groupId(params.chatId);
        const settings: GroupSettings = {};
        if (body.subject !== undefined) settings.subject = body.subject;
        if (body.description !== undefined) settings.description = body.description;
        if (body.announce !== undefined) settings.announce = body.announce;
        if (body.locked !== undefined) settings.locked = body.locked;
        if (Object.keys(settings).length === 0) throw new GatewayError('MISSING_FIELD', 'give at least one of subject, description, announce, locked');
        await core.sender.act(instance.id, (c) => c.updateGroup(chatId, settings), { paced: false });
        return { success: true, instanceId: instance.id, chatId, ...settings };
      },
    }),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/groups/:chatId/participants',
      operationId: 'groupParticipants',
      summary: 'Add, remove, promote or demote participants (admins only)',
      description:
        'One status per participant: `added` (or `invited`: their privacy settings refused a direct add, so an invite link was sent to them), `not_on_whatsapp`, `removed`, `promoted`, `demoted`, `already_in_group`, `not_in_group`, `failed` (with `error`). Waits its turn in the anti-ban queue.',
      body: ParticipantsInput,
      example: { action: 'add', participants: ['+15551234567'] },
      response: {
        description: 'What happened to each.',
        schema: ParticipantsBody,
        example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: GROUP, action: 'add', participants: [{ jid: '15551234567@s.whatsapp.net', phone: '+15551234567', status: 'added' }] },
      },
      errors: [...ON_A_GROUP, 'INVALID_PHONE'],
      async handle({ instance, params, body }) {
        const chatId = groupId(params.chatId);
        const participants = await core.sender.act(instance.id, (c) => c.groupParticipants(chatId, body.action, body.participants), { paced: true });
        return { success: true, instanceId: instance.id, chatId, action: body.action, participants };
      },
    }),
    invite('GET'),
    invite('DELETE'),
    defineRoute({
      ...common,
      method: 'POST',
      path: '/api/:id/groups/:chatId/leave',
      operationId: 'leaveGroup',
      summary: 'Leave a group',
      description: 'Waits its turn in the anti-ban queue.',
      response: { description: 'Left.', schema: GroupChatBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', chatId: GROUP } },
      errors: ['INVALID_FIELD', 'NOT_FOUND', 'CONNECTION_NOT_READY'],
      async handle({ instance, params }) {
        const chatId = groupId(params.chatId);
        await core.sender.act(instance.id, (c) => c.leaveGroup(chatId), { paced: true });
        return { success: true, instanceId: instance.id, chatId };
      },
    }),
    picture('PUT'),
    picture('DELETE'),
  ];
}
