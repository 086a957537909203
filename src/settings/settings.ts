import { GatewayError } from '../domain/errors.js';
import type { InstanceRecord, StoredSettings } from '../schemas/instance.js';

/** An instance's settings with every default filled in: what the behaviours read. */
export interface InstanceSettings {
  calls: { autoReject: boolean; rejectMessage?: string };
  alwaysOnline: boolean;
  autoRead: boolean;
  ignoreGroups: boolean;
  /**
   * Keeps `status@broadcast` traffic (the receipts, reactions and replies to the account's own
   * status posts) out of webhooks, flows and history. Contacts' status posts never reach them.
   */
  ignoreStatus: boolean;
  syncFullHistory: boolean;
  /** The proxy URL with its user and password, or null (direct). */
  proxy: string | null;
}

/** What an instance that never set anything has (DESIGN.md "Instance settings and proxy"). */
export const DEFAULT_SETTINGS: Readonly<InstanceSettings> = Object.freeze({
  calls: Object.freeze({ autoReject: false }),
  alwaysOnline: false,
  autoRead: false,
  ignoreGroups: false,
  ignoreStatus: false,
  syncFullHistory: false,
  proxy: null,
});

/** The settings of an instance (defaults for what it never set; all defaults for an unknown one). */
export function settingsOf(record: Pick<InstanceRecord, 'settings'> | undefined): InstanceSettings {
  const s: StoredSettings = record?.settings ?? {};
  const calls = s.calls ? { autoReject: s.calls.autoReject, ...(s.calls.rejectMessage !== undefined ? { rejectMessage: s.calls.rejectMessage } : {}) } : { ...DEFAULT_SETTINGS.calls };
  return {
    calls,
    alwaysOnline: s.alwaysOnline ?? DEFAULT_SETTINGS.alwaysOnline,
    autoRead: s.autoRead ?? DEFAULT_SETTINGS.autoRead,
    ignoreGroups: s.ignoreGroups ?? DEFAULT_SETTINGS.ignoreGroups,
    ignoreStatus: s.ignoreStatus ?? DEFAULT_SETTINGS.ignoreStatus,
    syncFullHistory: s.syncFullHistory ?? DEFAULT_SETTINGS.syncFullHistory,
    proxy: s.proxy ?? null,
  };
}

/** A change of settings (PUT): any subset; `calls` merges field by field; `rejectMessage: null` removes it. */
export interface SettingsChange {
  calls?: { autoReject?: boolean; rejectMessage?: string | null };
  alwaysOnline?: boolean;
  autoRead?: boolean;
  ignoreGroups?: boolean;
  ignoreStatus?: boolean;
  syncFullHistory?: boolean;
  proxy?: string | null;
}

const PROXY_PROTOCOLS = new Set(['http:', 'https:', 'socks5:']);

/**
 * Checks a proxy URL: `http://`, `https://` or `socks5://`, a host, an optional port, user and
 * password, nothing else (no path, query or fragment). Answers it normalised (the URL parser's
 * form); 400 INVALID_FIELD naming `proxy` otherwise. The message never repeats the URL: it may
 * hold a password.
 */
export function checkProxyUrl(value: string): string {
  const bad = (why: string): GatewayError => new GatewayError('INVALID_FIELD', `proxy: ${why} (expected http://, https:// or socks5:// then [user:password@]host[:port])`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad('is not a URL');
  }
  if (!PROXY_PROTOCOLS.has(url.protocol)) throw bad(`the scheme ${JSON.stringify(url.protocol.slice(0, 20))} is not allowed`);
  if (url.hostname === '') throw bad('has no host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') throw bad('must have no path, query or fragment');
  return `${url.protocol}//${url.username || url.password ? `${url.username}${url.password ? `:${url.password}` : ''}@` : ''}${url.host}`;
}

/**
 * How a proxy is shown: its user and password replaced by `***` (`socks5://***@host:1080`), so a
 * reader learns that it authenticates, never with what.
 */
export function shownProxy(proxy: string | null): string | null {
  if (proxy === null) return null;
  const url = new URL(proxy);
  const auth = url.username !== '' || url.password !== '';
  return `${url.protocol}//${auth ? '***@' : ''}${url.host}`;
}

/**
 * The stored settings after `change`. A `proxy` equal to what GET shows (`***` in place of the
 * credentials) keeps the stored one, so a client may PUT back what it read. Answers whether the
 * proxy changes, for the permission check.
 */
export function applyChange(record: Pick<InstanceRecord, 'settings'>, change: SettingsChange): { stored: StoredSettings; proxyChanged: boolean } {
  const current = settingsOf(record);
  let proxy = current.proxy;
  let proxyChanged = false;
  if (change.proxy !== undefined && change.proxy !== shownProxy(current.proxy)) {
    proxy = change.proxy === null ? null : checkProxyUrl(change.proxy);
    proxyChanged = proxy !== current.proxy;
  }
  const rejectMessage = change.calls?.rejectMessage === undefined ? current.calls.rejectMessage : (change.calls.rejectMessage ?? undefined);
  const stored: StoredSettings = {
    calls: { autoReject: change.calls?.autoReject ?? current.calls.autoReject, ...(rejectMessage !== undefined ? { rejectMessage } : {}) },
    alwaysOnline: change.alwaysOnline ?? current.alwaysOnline,
    autoRead: change.autoRead ?? current.autoRead,
    ignoreGroups: change.ignoreGroups ?? current.ignoreGroups,
    ignoreStatus: change.ignoreStatus ?? current.ignoreStatus,
    syncFullHistory: change.syncFullHistory ?? current.syncFullHistory,
    proxy,
  };
  return { stored, proxyChanged };
}
