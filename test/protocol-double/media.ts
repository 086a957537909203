import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * WhatsApp's media crypto and a loopback HTTPS media host (mmg.whatsapp.net's part in the double).
 * Written from the protocol, not with Baileys' helpers, so the double checks Baileys instead of
 * agreeing with it by construction: uploads are checked against their token (the base64url
 * SHA-256 of the encrypted file), and contacts verify the MAC and both hashes Baileys never checks.
 */

/** The test CA that signed the media host's certificate (its key was destroyed, see tls/README.md). */
export const MEDIA_CA_PATH = fileURLToPath(new URL('./tls/ca.pem', import.meta.url));
const CERT_PATH = fileURLToPath(new URL('./tls/media-cert.pem', import.meta.url));
const KEY_PATH = fileURLToPath(new URL('./tls/media-key.pem', import.meta.url));

/**
 * Environment for a child process (the built daemon) whose Baileys uploads to and downloads from
 * the media host: Node reads NODE_EXTRA_CA_CERTS once at start-up, for `https` and `fetch` alike.
 */
export function mediaTrustEnv(): { NODE_EXTRA_CA_CERTS: string };
/**
 * With the media host's `host:port`, also PROTOCOL_DOUBLE_MEDIA_HOST: preload-child.mjs then makes
 * WhatsApp's CDN host name (mmg.whatsapp.net, where Baileys fetches history syncs and app-state
 * snapshots) lead to the media host (cdn.mjs).
 */
export function mediaTrustEnv(mediaHost: string): { NODE_EXTRA_CA_CERTS: string; PROTOCOL_DOUBLE_MEDIA_HOST: string };
export function mediaTrustEnv(mediaHost?: string): Record<string, string> {
  return { NODE_EXTRA_CA_CERTS: MEDIA_CA_PATH, ...(mediaHost ? { PROTOCOL_DOUBLE_MEDIA_HOST: mediaHost } : {}) };
}

/** Media kinds, and the encrypted blobs of the sync: history syncs (`md-msg-hist`) and app-state snapshots (`md-app-state`). */
export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker' | 'ptt' | 'gif' | 'md-msg-hist' | 'md-app-state';

/** HKDF info per media kind (WhatsApp's "WhatsApp <X> Keys"). */
const HKDF_INFO: Record<MediaKind, string> = {
  image: 'WhatsApp Image Keys',
  sticker: 'WhatsApp Image Keys',
  video: 'WhatsApp Video Keys',
  gif: 'WhatsApp Video Keys',
  audio: 'WhatsApp Audio Keys',
  ptt: 'WhatsApp Audio Keys',
  document: 'WhatsApp Document Keys',
  'md-msg-hist': 'WhatsApp History Keys',
  'md-app-state': 'WhatsApp App State Keys',
};

/** Upload paths per kind (`/mms/<x>`); stickers go with images. */
const UPLOAD_KIND: Record<string, MediaKind> = { image: 'image', video: 'video', audio: 'audio', document: 'document' };

export interface MediaKeys {
  iv: Buffer;
  cipherKey: Buffer;
  macKey: Buffer;
}

/** HKDF-SHA256(mediaKey, no salt, info, 112): iv 16, cipher key 32, MAC key 32 (the rest unused). */
export function mediaKeys(mediaKey: Uint8Array, kind: MediaKind): MediaKeys {
  const expanded = Buffer.from(hkdfSync('sha256', mediaKey, Buffer.alloc(0), HKDF_INFO[kind], 112));
  return { iv: expanded.subarray(0, 16), cipherKey: expanded.subarray(16, 48), macKey: expanded.subarray(48, 80) };
}

export interface EncryptedMedia {
  mediaKey: Buffer;
  /** The file as uploaded: AES-256-CBC(plain) followed by the first 10 bytes of HMAC-SHA256(iv || enc). */
  file: Buffer;
  fileSha256: Buffer;
  fileEncSha256: Buffer;
  fileLength: number;
}

export function encryptMedia(plain: Uint8Array, kind: MediaKind, mediaKey: Buffer = randomBytes(32)): EncryptedMedia {
  const { iv, cipherKey, macKey } = mediaKeys(mediaKey, kind);
  const cipher = createCipheriv('aes-256-cbc', cipherKey, iv);
  const enc = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', macKey).update(iv).update(enc).digest().subarray(0, 10);
  const file = Buffer.concat([enc, mac]);
  return {
    mediaKey,
    file,
    fileSha256: createHash('sha256').update(plain).digest(),
    fileEncSha256: createHash('sha256').update(file).digest(),
    fileLength: plain.length,
  };
}

/**
 * Decrypts a media file, checking what a careful client checks: the encrypted file's SHA-256 (when
 * given), the MAC, and the plain file's SHA-256 and length (when given). Throws on any mismatch.
 */
export function decryptMedia(
  file: Uint8Array,
  mediaKey: Uint8Array,
  kind: MediaKind,
  expected: { fileEncSha256?: Uint8Array | null; fileSha256?: Uint8Array | null; fileLength?: number | null } = {},
): Buffer {
  const buf = Buffer.from(file);
  if (expected.fileEncSha256 && !createHash('sha256').update(buf).digest().equals(Buffer.from(expected.fileEncSha256))) {
    throw new Error('media: fileEncSha256 does not match the downloaded file');
  }
  if (buf.length < 10 + 16) throw new Error(`media: file too short (${buf.length} bytes)`);
  const enc = buf.subarray(0, buf.length - 10);
  const mac = buf.subarray(buf.length - 10);
  const { iv, cipherKey, macKey } = mediaKeys(mediaKey, kind);
  const want = createHmac('sha256', macKey).update(iv).update(enc).digest().subarray(0, 10);
  if (!timingSafeEqual(mac, want)) throw new Error('media: bad MAC');
  const decipher = createDecipheriv('aes-256-cbc', cipherKey, iv);
  const plain = Buffer.concat([decipher.update(enc), decipher.final()]);
  if (expected.fileSha256 && !createHash('sha256').update(plain).digest().equals(Buffer.from(expected.fileSha256))) {
    throw new Error('media: fileSha256 does not match the decrypted file');
  }
  if (expected.fileLength != null && Number(expected.fileLength) !== plain.length) {
    throw new Error(`media: fileLength ${String(expected.fileLength)} but ${plain.length} bytes decrypted`);
  }
  return plain;
}

/** base64url without padding, how WhatsApp names an upload by its encrypted SHA-256. */
export function uploadToken(fileEncSha256: Uint8Array): string {
  return Buffer.from(fileEncSha256).toString('base64url');
}

export interface StoredMedia {
  directPath: string;
  url: string;
  bytes: Buffer;
  kind: MediaKind;
  /** Who put it there: an upload over HTTPS (the gateway) or a simulated contact (in process). */
  source: 'upload' | 'contact';
}

export interface MediaRequest {
  method: string;
  path: string;
  status: number;
}

/**
 * The media host: `media_conn` answers point at it. `POST /mms/<type>/<token>?auth=…&token=…`
 * (Baileys' upload) must carry the current auth and a token equal to the body's base64url
 * SHA-256; it answers `{url, direct_path}`. `GET <direct_path>` serves the stored bytes.
 */
export class MediaHost {
  /** What `media_conn` hands out as `auth`; uploads must carry it. */
  readonly auth = randomBytes(18).toString('base64url');
  readonly blobs = new Map<string, StoredMedia>();
  readonly requests: MediaRequest[] = [];
  private nextId = 1;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<MediaHost> {
    const server = createServer({ key: readFileSync(KEY_PATH), cert: readFileSync(CERT_PATH) });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const host = new MediaHost(server, (server.address() as AddressInfo).port);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { status, headers, body } = host.handle(req.method ?? 'GET', req.url ?? '/', Buffer.concat(chunks));
        host.requests.push({ method: req.method ?? '', path: req.url ?? '', status });
        res.writeHead(status, headers);
        res.end(body);
      });
    });
    return host;
  }

  /** `host:port` as media_conn's `<host hostname>`. */
  get hostname(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Stores bytes a simulated contact uploaded (in process, no HTTP). */
  put(bytes: Buffer, kind: MediaKind, source: StoredMedia['source'] = 'contact'): StoredMedia {
    const directPath = `/v/t62.double-${kind}/${this.nextId++}-${randomBytes(6).toString('hex')}.enc`;
    const stored: StoredMedia = { directPath, url: `https://${this.hostname}${directPath}`, bytes, kind, source };
    this.blobs.set(directPath, stored);
    return stored;
  }

  /** The stored bytes behind a message's directPath (or url). */
  get(directPathOrUrl: string): StoredMedia | undefined {
    const path = directPathOrUrl.startsWith('https://') ? new URL(directPathOrUrl).pathname : directPathOrUrl.split('?')[0]!;
    return this.blobs.get(path);
  }

  uploads(): StoredMedia[] {
    return [...this.blobs.values()].filter((b) => b.source === 'upload');
  }

  private handle(method: string, rawUrl: string, body: Buffer): { status: number; headers: Record<string, string>; body: string | Buffer } {
    const url = new URL(rawUrl, `https://${this.hostname}`);
    const json = (status: number, value: unknown) => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
    const upload = /^\/mms\/([a-z]+)\/([A-Za-z0-9_-]+)$/.exec(url.pathname);
    if (method === 'POST' && upload) {
      const kind = UPLOAD_KIND[upload[1]!];
      if (!kind) return json(400, { error: `unknown media type ${upload[1]}` });
      if (url.searchParams.get('auth') !== this.auth) return json(401, { error: 'bad auth' });
      const token = upload[2]!;
      if (url.searchParams.get('token') !== token) return json(400, { error: 'token query and path differ' });
      if (uploadToken(createHash('sha256').update(body).digest()) !== token) return json(400, { error: 'token is not the SHA-256 of the body' });
      const stored = this.put(body, kind, 'upload');
      return json(200, { url: stored.url, direct_path: stored.directPath });
    }
    if (method === 'GET') {
      const stored = this.blobs.get(url.pathname);
      if (!stored) return { status: 404, headers: { 'content-type': 'text/plain' }, body: 'not found' };
      return { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: stored.bytes };
    }
    return { status: 405, headers: { 'content-type': 'text/plain' }, body: 'method not allowed' };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
