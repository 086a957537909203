import { request as httpRequest, type Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent } from 'node:https';
import type { LookupFunction } from 'node:net';

/** How much of a non-2xx answer is read for the error message; the rest is never downloaded. */
export const RESPONSE_PEEK_BYTES = 2048;

/**
 * Stops one attempt in flight (the daemon stopping, the instance deleted). Not an AbortSignal:
 * handing http.request a signal adds abort listeners to each request and removes them after, which
 * with the AbortController itself was ~3 % of the daemon's CPU while it delivered a burst of
 * webhooks (`BENCH_ONLY=webhooks BENCH_NODE_ARGS=--cpu-prof`, 2026-11-29).
 */
export class AttemptAbort {
  aborted = false;
  private hook: (() => void) | null = null;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const hook = this.hook;
    this.hook = null;
    hook?.();
  }

  /** What abort() does to the attempt (one at a time: the attempt in flight). */
  onAbort(hook: (() => void) | null): void {
    this.hook = hook;
  }
}

export interface PostInput {
  /** The target, parsed (checkWebhookUrl's result) or as stored. */
  url: URL | string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  lookup: LookupFunction;
  agents: { http: HttpAgent; https: HttpsAgent };
  abort: AttemptAbort;
}

/**
 * How one attempt ended. `error` is a one-line reason to store and show to the instance (no
 * secret, no URL; it may quote the receiver's answer). `logError` says the same without the
 * receiver's words: a receiver's error page may carry its data, and logs are read by others.
 * `bodyBytes`: the size of the receiver's answer (its content-length, else what arrived), if any.
 */
export type PostResult = { ok: true; status: number } | { ok: false; status: number | null; error: string; logError: string; bodyBytes: number | null; aborted: boolean };

/** A failure that quotes nothing of the receiver (connection errors, timeouts, refusals). */
function failure(error: string, status: number | null = null, aborted = false): PostResult {
  return { ok: false, status, error, logError: error, bodyBytes: null, aborted };
}

function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'EPRIVATETARGET') return e.message;
  if (err instanceof Error) return `${e.code ? `${e.code}: ` : ''}${oneLine(err.message)}`;
  return oneLine(String(err));
}

/**
 * One POST with node:http(s): no retries (the outbox schedules them), no redirects (a 3xx is a
 * failure), the configured timeout for the whole exchange, the guarded lookup (SSRF), and at most
 * RESPONSE_PEEK_BYTES of the answer read before the socket is let go. Never throws.
 *
 * Not got (which this used before): node:http does everything a delivery needs, and got's
 * per-request option merging and stream wrapping were 10.6 % of the daemon's CPU (plus their
 * garbage) while it delivered a burst of 2,000 webhooks (`BENCH_ONLY=webhooks
 * BENCH_NODE_ARGS=--cpu-prof npm run bench`; the daemon's main thread was 91 % busy).
 */
export function postWebhook(input: PostInput): Promise<PostResult> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = typeof input.url === 'string' ? new URL(input.url) : input.url;
    } catch {
      resolve(failure('the webhook URL is not a valid URL'));
      return;
    }
    if (input.abort.aborted) {
      resolve(failure('aborted: daemon shutting down', null, true));
      return;
    }
    const secure = target.protocol === 'https:';
    const body = Buffer.from(input.body, 'utf8');
    let settled = false;
    let status: number | null = null;
    let declared: number | null = null;
    const chunks: Buffer[] = [];
    let size = 0;
    let req: ClientRequest;

    const finish = (result: PostResult, keepSocket = false): void => {
      if (settled) return;
      settled = true;
      if (!keepSocket) input.abort.onAbort(null);
      resolve(result);
      // A short 2xx body is read to its end so the keep-alive socket can be reused; anything
      // else (errors, big bodies, a timeout) is cut off.
      if (!keepSocket) {
        clearTimeout(timer);
        req.destroy();
      }
    };
    const failWithBody = (): void => {
      const code = status ?? 0;
      const text = Buffer.concat(chunks).subarray(0, RESPONSE_PEEK_BYTES).toString('utf8');
      const redirect = code >= 300 && code < 400;
      const what = redirect ? 'redirects are not followed' : oneLine(text) || 'no body';
      finish({ ok: false, status: code, error: `HTTP ${code}: ${what}`, logError: redirect ? `HTTP ${code}: ${what}` : `HTTP ${code}`, bodyBytes: declared ?? size, aborted: false });
    };
    // The whole exchange, the rest of a 2xx body included (a receiver that stalls after its status
    // line does not hold the socket).
    const timer = setTimeout(() => {
      if (settled) req.destroy();
      else finish(failure(`timeout: no answer within ${input.timeoutMs} ms`, status));
    }, input.timeoutMs);

    try {
      req = (secure ? httpsRequest : httpRequest)(target, {
        method: 'POST',
        headers: { ...input.headers, 'content-length': String(body.length) },
        agent: secure ? input.agents.https : input.agents.http,
        lookup: input.lookup,
      });
    } catch (err) {
      clearTimeout(timer);
      resolve(failure(describeError(err)));
      return;
    }
    input.abort.onAbort(() => {
      if (settled) finishSocket();
      else finish(failure('aborted: daemon shutting down', null, true));
    });

    req.on('response', (res: IncomingMessage) => {
      status = res.statusCode ?? 0;
      const length = Number(res.headers['content-length']);
      declared = res.headers['content-length'] !== undefined && Number.isSafeInteger(length) && length >= 0 ? length : null;
      const ok = status >= 200 && status < 300;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (settled) {
          if (size > RESPONSE_PEEK_BYTES) finishSocket();
          return;
        }
        chunks.push(chunk);
        if (size >= RESPONSE_PEEK_BYTES) failWithBody();
      });
      res.on('end', () => {
        if (!settled) failWithBody();
        else {
          input.abort.onAbort(null);
          clearTimeout(timer);
        }
      });
      res.on('error', () => (settled ? finishSocket() : failWithBody()));
      if (ok) finish({ ok: true, status }, true);
      else if (status >= 300 && status < 400) failWithBody();
    });
    const finishSocket = (): void => {
      input.abort.onAbort(null);
      clearTimeout(timer);
      req.destroy();
    };
    req.on('error', (err: unknown) => {
      if (settled) return;
      if (status !== null) {
        failWithBody();
        return;
      }
      const aborted = input.abort.aborted;
      finish(failure(aborted ? 'aborted: daemon shutting down' : describeError(err), null, aborted));
    });
    req.end(body);
  });
}
