import type { GatewayConfig } from '../config/schema.js';
import type { ConnectionActions } from '../connection/types.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { withUpload } from '../http/upload.js';
import { detectMedia } from '../media/media-type.js';
import { PictureBody, ProfileBody, ProfileInput } from '../schemas/account.js';
import { closed } from '../schemas/common.js';

const PROFILE_EXAMPLE = {
  success: true,
  instanceId: 'inst_k3J9xQ2mVb7n',
  jid: '15550001111@s.whatsapp.net',
  phone: '+15550001111',
  name: 'Acme Shop',
  about: 'Open 9 to 5',
  pictureUrl: 'https://pps.whatsapp.net/v/t61.24694-24/def.jpg',
  business: true,
};

/** The account's own profile: name, about text, picture. Free. */
export function profileRoutes(core: { sender: ConnectionActions; config: { media: Pick<GatewayConfig['media'], 'maxBytes'> } }): RouteDef[] {
  const view = async (instanceId: string) => ({ success: true as const, instanceId, ...(await core.sender.act(instanceId, (c) => c.profile(), { paced: false })) });
  return [
    defineRoute({
      method: 'GET',
      path: '/api/:id/profile',
      auth: 'instance',
      operationId: 'getProfile',
      summary: "The account's profile: phone, name, about text, picture, and whether it is a Business account",
      tags: ['profile'],
      response: { description: 'The profile.', schema: ProfileBody, example: PROFILE_EXAMPLE },
      errors: ['CONNECTION_NOT_READY'],
      handle: ({ instance }) => view(instance.id),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/:id/profile',
      auth: 'instance',
      operationId: 'updateProfile',
      summary: 'Change the name (push name) and/or the about text',
      tags: ['profile'],
      body: ProfileInput,
      example: { name: 'Acme Shop', about: 'Open 9 to 5' },
      response: { description: 'The profile after the change.', schema: ProfileBody, example: PROFILE_EXAMPLE },
      errors: ['MISSING_FIELD', 'INVALID_FIELD', 'CONNECTION_NOT_READY'],
      async handle({ instance, body }) {
        if (body.name === undefined && body.about === undefined) throw new GatewayError('MISSING_FIELD', 'name or about is required');
        await core.sender.act(instance.id, (c) => c.updateProfile(body), { paced: false });
        return view(instance.id);
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/:id/profile/picture',
      auth: 'instance',
      operationId: 'setProfilePicture',
      summary: 'Set the profile picture (multipart `file`: a JPEG, PNG or WebP image; WhatsApp shows it 640x640)',
      tags: ['profile'],
      multipart: closed({}),
      example: {},
      response: { description: 'Set.', schema: PictureBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', picture: true } },
      errors: ['MISSING_FIELD', 'INVALID_FIELD', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'CONNECTION_NOT_READY'],
      async handle({ koa, instance }) {
        return withUpload(koa, core.config.media.maxBytes, async (file, fields) => {
          const extra = Object.keys(fields)[0];
          if (extra !== undefined) throw new GatewayError('INVALID_FIELD', `unexpected field ${JSON.stringify(extra.slice(0, 40))}; send only the file`);
          if (!file) throw new GatewayError('MISSING_FIELD', 'file is required');
          const detected = await detectMedia(file.filepath, file.mimetype);
          if (!['image/jpeg', 'image/png', 'image/webp'].includes(detected.mimetype)) {
            throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `a profile picture is a JPEG, PNG or WebP image; this file is ${detected.mimetype}`);
          }
          await core.sender.act(instance.id, (c) => c.setProfilePicture({ path: file.filepath }), { paced: false });
          return { success: true, instanceId: instance.id, picture: true };
        });
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/:id/profile/picture',
      auth: 'instance',
      operationId: 'removeProfilePicture',
      summary: 'Remove the profile picture',
      tags: ['profile'],
      response: { description: 'Removed.', schema: PictureBody, example: { success: true, instanceId: 'inst_k3J9xQ2mVb7n', picture: false } },
      errors: ['CONNECTION_NOT_READY'],
      async handle({ instance }) {
        await core.sender.act(instance.id, (c) => c.setProfilePicture(null), { paced: false });
        return { success: true, instanceId: instance.id, picture: false };
      },
    }),
  ];
}
