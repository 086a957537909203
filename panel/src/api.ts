/** Calls the gateway's ordinary REST routes with the session cookie (and the CSRF token on writes). */
let csrfToken = '';

export function setCsrf(token: string): void {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Told when a call is refused with 401: the session may have ended (the app checks and signs out). */
const unauthorizedListeners = new Set<() => void>();
export function onUnauthorized(fn: () => void): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}
const unauthorized = (): void => unauthorizedListeners.forEach((fn) => fn());

/**
 * A change of session under way (a tenant rotating its own key signs in again with the new one):
 * session checks wait for it, so the moment between the two is not taken for a signed-out session.
 */
let changing: Promise<unknown> = Promise.resolve();
export function sessionChanging<T>(p: Promise<T>): Promise<T> {
  changing = p.catch(() => undefined);
  return p;
}
export const sessionSettled = (): Promise<unknown> => changing;

export interface CallOptions {
  /**
   * A refresh the panel makes on its own (polling, the session check): it does not count as
   * activity, so a panel left open still signs out after the idle time.
   */
  background?: boolean;
}

export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  if (options.background) headers['x-panel-background'] = '1';
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const data = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } & Record<string, unknown> };
  if (!res.ok) {
    if (res.status === 401 && !path.startsWith('/panel/api/session')) unauthorized();
    throw new ApiError(res.status, data.error?.code ?? 'ERROR', data.error?.message ?? res.statusText, data.error ?? {});
  }
  return data as T;
}

export interface Session {
  role: 'admin' | 'instance' | 'agent';
  instanceId: string | null;
  csrfToken: string;
  /** The operator signed in (null: the server secret or an instance key). */
  operator: string | null;
  /** An instance session's instance name. */
  name: string | null;
  /** Whether an instance session's instance is a sandbox. */
  sandbox: boolean | null;
  /** An agent's instances. */
  instances: Array<{ instanceId: string; name: string | null }>;
}

/** Who is signed in, in words for the header. */
export function whoIs(s: Session): string {
  if (s.operator) return s.role === 'agent' ? `${s.operator} (agent)` : `${s.operator} (admin)`;
  if (s.role === 'admin') return 'admin (server secret)';
  return s.name ?? s.instanceId ?? 'instance';
}

/** A multipart form (a file) to a REST route, with the session's CSRF token. */
export async function upload<T = Record<string, unknown>>(path: string, form: FormData): Promise<T> {
  const res = await fetch(path, { method: 'POST', headers: { accept: 'application/json', 'x-csrf-token': csrfToken }, credentials: 'same-origin', body: form });
  const data = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } & Record<string, unknown> };
  if (!res.ok) {
    if (res.status === 401) unauthorized();
    throw new ApiError(res.status, data.error?.code ?? 'ERROR', data.error?.message ?? res.statusText, data.error ?? {});
  }
  return data as T;
}

export interface WebhookView {
  url: string;
  signed: boolean;
  events: string[] | 'all';
}

export interface InstanceView {
  instanceId: string;
  name: string | null;
  owner: string | null;
  sandbox: boolean;
  status: string;
  reason: string | null;
  premium: boolean;
  premiumUntil: string | null;
  credits?: number;
  quotaRemaining: number | string;
  createdAt?: string;
  webhook?: WebhookView | null;
}

/** Every event type the gateway publishes (src/schemas/events.ts; a test keeps the two lists equal). */
export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.status',
  'message.reaction',
  'message.edited',
  'message.deleted',
  'instance.status',
  'qr.updated',
  'conversation.handover',
  'label.updated',
  'webhook.test',
  'group.joined',
  'group.updated',
  'group.participants',
  'call.received',
  'presence.updated',
  'poll.vote',
] as const;

export const enc = encodeURIComponent;

/**
 * Live events of one instance (GET /api/{id}/events); returns the closer. One stream per page:
 * a browser opens at most six connections to the daemon, and each stream holds one.
 */
export function liveEvents(id: string, types: string[], on: (type: string, data: Record<string, unknown>) => void): () => void {
  const source = new EventSource(`/api/${enc(id)}/events?types=${enc(types.join(','))}`);
  for (const t of types) {
    source.addEventListener(t, (e) => {
      try {
        const parsed = JSON.parse((e as MessageEvent<string>).data) as { data: Record<string, unknown> };
        on(t, parsed.data);
      } catch {
        // a malformed frame is skipped
      }
    });
  }
  // Refused (401) or cut by the server at the end of the session: the app checks the session.
  source.addEventListener('error', () => {
    if (source.readyState === EventSource.CLOSED) unauthorized();
  });
  return () => source.close();
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429) return `${err.message} (${err.code}): too many attempts, wait a little and try again`;
    return `${err.message} (${err.code})`;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * For reloads that can overtake each other (a poll, an event, an action's own reload): each call
 * of the returned function starts one and gives back "is it still the newest?", so an older
 * answer arriving last never replaces a newer one.
 */
export function newestOnly(): () => () => boolean {
  let n = 0;
  return () => {
    const mine = ++n;
    return () => mine === n;
  };
}

/** A time in the reader's locale; the ISO text stays in the title. */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A message's time: the hour alone when it is today. */
export function clock(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toDateString() === new Date().toDateString() ? d.toLocaleTimeString(undefined, { timeStyle: 'short' }) : when(iso);
}

/** Repeats `fn` every `ms` while the page is visible (background refreshes). */
export function every(ms: number, fn: () => void): () => void {
  const timer = setInterval(() => {
    if (document.visibilityState === 'visible') fn();
  }, ms);
  const onVisible = (): void => {
    if (document.visibilityState === 'visible') fn();
  };
  document.addEventListener('visibilitychange', onVisible);
  return () => {
    clearInterval(timer);
    document.removeEventListener('visibilitychange', onVisible);
  };
}
