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

export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET') headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const data = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } & Record<string, unknown> };
  if (!res.ok) throw new ApiError(res.status, data.error?.code ?? 'ERROR', data.error?.message ?? res.statusText, data.error ?? {});
  return data as T;
}

export interface Session {
  role: 'admin' | 'instance';
  instanceId: string | null;
  csrfToken: string;
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
  webhook?: { url: string; events: string[] | null; hasSecret?: boolean } | null;
}

export const enc = encodeURIComponent;

/** Live events of one instance; returns the closer. */
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
  return () => source.close();
}

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}
