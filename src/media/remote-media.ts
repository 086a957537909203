import { createWriteStream } from 'node:fs';
import { isIP } from 'node:net';
import { basename } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GatewayError } from '../domain/errors.js';
import { guardedLookup } from '../webhooks/guarded-lookup.js';
import { isPrivateAddress, systemResolver, type Resolver } from '../webhooks/target-policy.js';

export interface FetchMediaOptions {
  /** `media.maxBytes`: a bigger file is refused (by its Content-Length, else while it streams). */
  maxBytes: number;
  /** `media.fetchTimeoutMs`: the whole download. */
  timeoutMs: number;
  /** `webhooks.allowPrivateTargets`: the same SSRF rule as webhooks. */
  allowPrivate: boolean;
  resolve?: Resolver;
  /** Test seam: which addresses count as private (default the webhook policy's isPrivateAddress). */
  isPrivate?: (address: string) => boolean;
}

export interface FetchedMedia {
  size: number;
  /** The server's Content-Type (a claim; the gateway types media by content). */
  contentType: string | null;
  /** From Content-Disposition, else the URL's last path segment. */
  fileName: string | null;
}

/** Redirects followed at most (each one checked like the first URL). */
export const MAX_REDIRECTS = 5;

const failed = (cause: string, err?: unknown): GatewayError => new GatewayError('MEDIA_FETCH_FAILED', `url could not be fetched: ${cause}`, err === undefined ? undefined : { cause: err });

/** Throws unless `url` is http(s), without credentials, and (unless allowed) not a private IP literal. */
function checkUrl(url: URL, allowPrivate: boolean, isPrivate: (address: string) => boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw failed(`only http:// and https:// URLs are fetched (got ${url.protocol})`);
  if (url.username || url.password) throw failed('the URL must not contain credentials');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // An IP literal never goes through the lookup (the socket connects to it directly).
  if (!allowPrivate && isIP(host) && isPrivate(host)) {
    throw failed(`${host} is a loopback/private address; set webhooks.allowPrivateTargets to true in config.json to allow it`);
  }
}

function fileNameOf(disposition: string | undefined, url: URL): string | null {
  const quoted = disposition ? /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition)?.[1] : undefined;
  let name = quoted ? decodeURIComponent(quoted) : basename(decodeURIComponent(url.pathname));
  name = name.replace(/[\\/\0]/g, '').slice(0, 200);
  return name === '' ? null : name;
}

/**
 * Downloads a media file for send-media into `dest` with got (loaded on first use: the CLI never
 * needs it), under the webhook SSRF rules: http(s) only, every host (the first and each redirect,
 * at most MAX_REDIRECTS) resolved through the guarded lookup, which refuses private addresses
 * unless `webhooks.allowPrivateTargets`, and private IP literals refused before connecting; at
 * most `maxBytes` (refused from the Content-Length when it says more, else cut off while
 * streaming); the whole download within `timeoutMs`. Nothing is sent or charged before it ends;
 * every failure is 400 MEDIA_FETCH_FAILED naming its cause.
 */
export async function fetchMedia(raw: string, dest: string, options: FetchMediaOptions): Promise<FetchedMedia> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GatewayError('INVALID_FIELD', 'url: not a valid absolute URL');
  }
  const isPrivate = options.isPrivate ?? isPrivateAddress;
  checkUrl(url, options.allowPrivate, isPrivate);
  const { default: got, HTTPError, MaxRedirectsError, TimeoutError } = await import('got');
  let size = 0;
  let contentType: string | null = null;
  let fileName: string | null = null;
  /** Set when the size limit ended the download (got wraps the error it was destroyed with). */
  let tooBig: GatewayError | null = null;
  const stream = got.stream(url, {
    timeout: { request: options.timeoutMs },
    retry: { limit: 0 },
    followRedirect: true,
    maxRedirects: MAX_REDIRECTS,
    dnsLookup: guardedLookup(options.resolve ?? systemResolver, options.allowPrivate, 'media host', isPrivate),
    headers: { 'user-agent': 'wa-gateway (media fetch)' },
    hooks: {
      beforeRedirect: [
        (next) => {
          // Thrown here, the redirect is never followed: got ends the stream with this error.
          if (next.url) checkUrl(new URL(next.url), options.allowPrivate, isPrivate);
        },
      ],
    },
  });
  stream.on('response', (res: { headers: Record<string, string | string[] | undefined>; url: string }) => {
    const declared = Number(res.headers['content-length'] ?? '');
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      tooBig = failed(`the file is larger than media.maxBytes (${declared} > ${options.maxBytes} bytes)`);
      stream.destroy(tooBig);
      return;
    }
    const type = res.headers['content-type'];
    contentType = typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : null;
    const disposition = res.headers['content-disposition'];
    fileName = fileNameOf(typeof disposition === 'string' ? disposition : undefined, new URL(res.url));
  });
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > options.maxBytes) {
        tooBig = failed(`the file is larger than media.maxBytes (more than ${options.maxBytes} bytes)`);
        done(tooBig);
        return;
      }
      done(null, chunk);
    },
  });
  try {
    await pipeline(stream, counter, createWriteStream(dest, { mode: 0o600 }));
  } catch (err) {
    if (tooBig) throw tooBig;
    if (err instanceof GatewayError) throw err;
    const e = err as NodeJS.ErrnoException & { response?: { statusCode?: number } };
    if (err instanceof HTTPError) throw failed(`the server answered HTTP ${e.response?.statusCode ?? '?'}`, err);
    if (err instanceof MaxRedirectsError) throw failed(`more than ${MAX_REDIRECTS} redirects`, err);
    if (err instanceof TimeoutError) throw failed(`no complete answer within ${options.timeoutMs} ms (media.fetchTimeoutMs)`, err);
    // The guarded lookup's refusal, DNS and connection errors: their own words.
    const inner = (e.cause as NodeJS.ErrnoException | undefined) ?? e;
    if (inner.code === 'EPRIVATETARGET') throw failed(inner.message, err);
    throw failed(`${inner.code ? `${inner.code}: ` : ''}${inner.message.split('\n')[0]!.slice(0, 200)}`, err);
  }
  if (size === 0) throw failed('the server sent an empty file');
  return { size, contentType, fileName };
}
