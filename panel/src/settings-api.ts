import { enc, type Session } from './api';

/** An instance's settings as GET|PUT /settings answer them (src/settings/schemas.ts). */
export interface InstanceSettings {
  calls: { autoReject: boolean; rejectMessage?: string };
  alwaysOnline: boolean;
  autoRead: boolean;
  ignoreGroups: boolean;
  ignoreStatus: boolean;
  syncFullHistory: boolean;
  /** Without its user and password (`socks5://***@host:1080`), or null: direct. */
  proxy: string | null;
}

/** A change (PUT): only what changed; `rejectMessage: null` and `proxy: null` remove them. */
export interface SettingsChange {
  calls?: { autoReject?: boolean; rejectMessage?: string | null };
  alwaysOnline?: boolean;
  autoRead?: boolean;
  ignoreGroups?: boolean;
  ignoreStatus?: boolean;
  syncFullHistory?: boolean;
  proxy?: string | null;
}

/**
 * Where a session reads and writes an instance's settings: an admin (the server secret or an
 * admin operator) through the admin route, which may always set the proxy; an instance key through
 * its own. Agents have neither (src/http/agent-policy.ts).
 */
export const settingsPath = (session: Session, id: string): string => (session.role === 'admin' ? `/api/instances/${enc(id)}/settings` : `/api/${enc(id)}/settings`);
