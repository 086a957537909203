import type { Feature } from '../features/feature.js';
import { settingsRoutes, type SettingsRouteParts } from './routes.js';

export { withSettings, type SettingsHookParts } from './hooks.js';
export { DEFAULT_SETTINGS, settingsOf, type InstanceSettings } from './settings.js';

/**
 * Instance settings (GET|PUT /api/{id}/settings, and /api/instances/{id}/settings with the server
 * secret). What they do happens elsewhere, each reading the stored settings when it acts: the
 * connection hooks (withSettings: ignoreGroups, ignoreStatus, autoRead), the calls feature
 * (calls.autoReject), each connection at connect (alwaysOnline; Baileys also proxy and
 * syncFullHistory), and these routes when alwaysOnline changes.
 */
export function settingsFeature(parts: SettingsRouteParts): Feature {
  return { name: 'settings', routes: settingsRoutes(parts) };
}
