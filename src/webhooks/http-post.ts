import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { RequestError as GotRequestError } from 'got';

/** got, loaded on the first delivery: it costs ~0.25 s of start-up for every CLI command otherwise. */
let gotModule: Promise<typeof import('got')> | null = null;
const loadGot = (): Promise<typeof import('got')> => (gotModule ??= import('got'));

/** How much of a non-2xx answer is read for the error message; the rest is never downloaded. */
export const RESPONSE_PEEK_BYTES = 2048;

export interface PostInput {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  lookup: LookupFunction;
  agents: { http: HttpAgent; https: HttpsAgent };
  signal: AbortSignal;
}

/** How one attempt ended; `error` is a one-line reason safe to store and show (no secrets, no URL). */
export type PostResult = { ok: true; status: number } | { ok: false; status: number | null; error: string; aborted: boolean };

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

function describeError(err: unknown, timeoutMs: number, RequestError: typeof GotRequestError): string {
  if (err instanceof RequestError) {
    if (err.name === 'TimeoutError') return `timeout: no answer within ${timeoutMs} ms`;
    const cause = (err as { cause?: unknown }).cause;
    if (err.code === 'EPRIVATETARGET' && cause instanceof Error) return cause.message;
    if (err.code === 'EPRIVATETARGET') return err.message;
    return `${err.code ? `${err.code}: ` : ''}${oneLine(err.message)}`;
  }
  return oneLine(err instanceof Error ? err.message : String(err));
}

type Got = (typeof import('got'))['default'];

/**
 * got instances with the options every delivery shares (by agents: one per deliverer), so each
 * request merges only its own (got merges every option into a fresh Options per request).
 */
const clients = new WeakMap<object, { timeoutMs: number; lookup: LookupFunction; got: Got }>();

function clientFor(got: Got, input: PostInput): Got {
  const known = clients.get(input.agents);
  if (known && known.timeoutMs === input.timeoutMs && known.lookup === input.lookup) return known.got;
  const client = got.extend({
    timeout: { request: input.timeoutMs },
    retry: { limit: 0 },
    followRedirect: false,
    throwHttpErrors: false,
    decompress: false,
    http2: false,
    dnsLookup: input.lookup,
    agent: input.agents,
  });
  clients.set(input.agents, { timeoutMs: input.timeoutMs, lookup: input.lookup, got: client });
  return client;
}

/**
 * One POST with got: no retries (the outbox schedules them), no redirects (a 3xx is a failure),
 * the configured timeout, and at most RESPONSE_PEEK_BYTES of the answer read before the socket is
 * let go. Never throws.
 */
export async function postWebhook(input: PostInput): Promise<PostResult> {
  const { default: got, RequestError } = await loadGot();
  const client = clientFor(got, input);
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    const stream = client.stream(input.url, { method: 'POST', body: input.body, headers: input.headers, signal: input.signal });
    const finish = (result: PostResult, keepSocket = false): void => {
      if (settled) return;
      settled = true;
      resolve(result);
      // A short 2xx body is read to its end so the keep-alive socket can be reused; anything
      // else (errors, big bodies) is cut off.
      if (!keepSocket) stream.destroy();
    };
    const failWithBody = (): void => {
      const code = status ?? 0;
      const text = Buffer.concat(chunks).subarray(0, RESPONSE_PEEK_BYTES).toString('utf8');
      const what = code >= 300 && code < 400 ? 'redirects are not followed' : oneLine(text) || 'no body';
      finish({ ok: false, status: code, error: `HTTP ${code}: ${what}`, aborted: false });
    };
    stream.on('response', (res: { statusCode: number }) => {
      status = res.statusCode;
      if (status >= 200 && status < 300) {
        finish({ ok: true, status }, true);
        return;
      }
      if (status >= 300 && status < 400) failWithBody();
    });
    stream.on('data', (chunk: Buffer) => {
      if (settled) {
        size += chunk.length;
        if (size > RESPONSE_PEEK_BYTES) stream.destroy();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_PEEK_BYTES) failWithBody();
    });
    stream.on('end', () => {
      if (status !== null) failWithBody();
    });
    stream.on('error', (err: unknown) => {
      if (status !== null) {
        failWithBody();
        return;
      }
      const aborted = input.signal.aborted;
      finish({ ok: false, status: null, error: aborted ? 'aborted: daemon shutting down' : describeError(err, input.timeoutMs, RequestError), aborted });
    });
  });
}
