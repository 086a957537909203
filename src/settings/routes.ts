import type { Logger } from 'pino';
import type { ConnectionActions } from '../connection/types.js';
import { GatewayError } from '../domain/errors.js';
import { defineRoute, type Principal, type RouteDef } from '../http/route.js';
import type { InstanceRecord } from '../schemas/instance.js';
import type { InstanceRepository } from '../storage/ports/instances.js';
import { SettingsBody, SettingsInput } from './schemas.js';
import { applyChange, settingsOf, shownProxy, type SettingsChange } from './settings.js';

/** What the settings routes are built from. */
export interface SettingsRouteParts {
  instances: Pick<InstanceRepository, 'require' | 'modify'>;
  /** `instances.tenantsMayProxy`: whether an instance key may set `proxy`. */
  tenantsMayProxy: boolean;
  /** Tells WhatsApp at once when `alwaysOnline` is turned on or off (best effort). */
  sender: ConnectionActions;
  logger: Logger;
}

const EXAMPLE_ID = 'inst_k3J9xQ2mVb7n';
const EXAMPLE_INPUT = { calls: { autoReject: true, rejectMessage: 'Sorry, we cannot take calls here: please write.' }, autoRead: true, ignoreGroups: true };
const EXAMPLE_BODY = {
  success: true,
  instanceId: EXAMPLE_ID,
  calls: { autoReject: true, rejectMessage: 'Sorry, we cannot take calls here: please write.' },
  alwaysOnline: false,
  autoRead: true,
  ignoreGroups: true,
  ignoreStatus: false,
  syncFullHistory: false,
  proxy: 'socks5://***@proxy.example.com:1080',
};
const SANDBOX_NOTE = 'A sandbox instance keeps and shows every setting, and behaves by them, except `proxy`: it is stored, but a sandbox has no socket to use it on.';

/** The settings as the API shows them (the proxy without its credentials). */
function view(record: InstanceRecord): Record<string, unknown> {
  const s = settingsOf(record);
  return { success: true, instanceId: record.id, ...s, proxy: shownProxy(s.proxy) };
}

/** Only an instance's own key (or its panel session) is a tenant; the secret, admins and the CLI are not. */
function isTenant(principal: Principal): boolean {
  return principal.kind === 'instance-key' || (principal.kind === 'session' && principal.role === 'instance');
}

export function settingsRoutes(parts: SettingsRouteParts): RouteDef[] {
  const update = async (id: string, change: SettingsChange, tenant: boolean): Promise<Record<string, unknown>> => {
    let before = false;
    const record = await parts.instances.modify(id, (r) => {
      const { stored, proxyChanged } = applyChange(r, change);
      if (proxyChanged && tenant && !parts.tenantsMayProxy) {
        throw new GatewayError('PROXY_NOT_ALLOWED', "only the server secret may set this instance's proxy (PUT /api/instances/{id}/settings), unless instances.tenantsMayProxy is true");
      }
      before = settingsOf(r).alwaysOnline;
      r.settings = stored;
    });
    const now = settingsOf(record).alwaysOnline;
    // Not waited for and not an error when not connected: the next connect applies it anyway.
    if (now !== before) {
      parts.sender
        .act(id, (c) => c.presence('', now ? 'available' : 'unavailable'), { paced: false })
        .catch((err: unknown) => parts.logger.debug({ err, instanceId: id }, 'could not send the presence of alwaysOnline now; the next connect does'));
    }
    return view(record);
  };

  return [
    defineRoute({
      method: 'GET',
      path: '/api/:id/settings',
      auth: 'instance',
      operationId: 'getSettings',
      summary: "The instance's settings: calls, presence, read marks, what is ignored, history sync, proxy",
      description: SANDBOX_NOTE,
      tags: ['instance'],
      response: { description: 'Every setting, defaults filled in; the proxy without its user and password.', schema: SettingsBody, example: EXAMPLE_BODY },
      handle: ({ instance }) => view(instance),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/:id/settings',
      auth: 'instance',
      operationId: 'putSettings',
      summary: 'Change settings: any subset, what is left out keeps its value',
      description: `\`calls\` merges field by field. Setting \`proxy\` with the instance key is 403 \`PROXY_NOT_ALLOWED\` unless the config allows it (\`instances.tenantsMayProxy\`); putting back the proxy GET showed is no change. ${SANDBOX_NOTE}`,
      tags: ['instance'],
      body: SettingsInput,
      example: EXAMPLE_INPUT,
      response: { description: 'Every setting after the change.', schema: SettingsBody, example: EXAMPLE_BODY },
      errors: ['INVALID_FIELD', 'PROXY_NOT_ALLOWED', 'STORAGE_UNAVAILABLE'],
      handle: ({ instance, body, principal }) => update(instance.id, body, isTenant(principal)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/instances/:id/settings',
      auth: 'admin',
      operationId: 'adminGetSettings',
      summary: "An instance's settings (server secret)",
      description: SANDBOX_NOTE,
      tags: ['provisioning'],
      response: { description: 'Every setting, defaults filled in; the proxy without its user and password.', schema: SettingsBody, example: EXAMPLE_BODY },
      errors: ['NOT_FOUND'],
      handle: ({ params }) => view(parts.instances.require(params.id!)),
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/instances/:id/settings',
      auth: 'admin',
      operationId: 'adminPutSettings',
      summary: "Change an instance's settings, the proxy included (server secret)",
      description: `Any subset; what is left out keeps its value (\`calls\` field by field). ${SANDBOX_NOTE}`,
      tags: ['provisioning'],
      body: SettingsInput,
      example: { proxy: 'socks5://user:password@proxy.example.com:1080', alwaysOnline: true },
      response: { description: 'Every setting after the change.', schema: SettingsBody, example: { ...EXAMPLE_BODY, alwaysOnline: true } },
      errors: ['INVALID_FIELD', 'NOT_FOUND', 'STORAGE_UNAVAILABLE'],
      handle: ({ params, body }) => update(params.id!, body, false),
    }),
  ];
}
