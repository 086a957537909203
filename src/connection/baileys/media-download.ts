import { downloadMediaMessage, type WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { closeCode } from './outgoing.js';
import type { SocketLike } from './options.js';
import { viaDispatcher, type FetchDispatcher } from './proxy-dispatcher.js';

/** What the CDN answers for media it no longer keeps. */
const GONE = new Set([404, 410]);

/**
 * Downloads and decrypts a received message's media. When the CDN copy expired (404/410), the
 * phone is asked to upload it again (Baileys' updateMediaMessage: a `server-error` receipt, then a
 * `mediaretry` notification with the new path) and the download is tried once more.
 *
 * Done here rather than through Baileys' own `reuploadRequest`: in rc14 downloadMediaMessage only
 * asks for a re-upload when the error has a `status`, and its download errors are Booms, which
 * carry the HTTP status in `output.statusCode` instead, so that path never runs.
 */
export async function downloadReceivedMedia(sock: SocketLike, msg: WAMessage, logger: Logger, dispatcher?: FetchDispatcher): Promise<Uint8Array> {
  // Through the instance's proxy when it has one (fetch takes it as `dispatcher`, see proxy.ts).
  const options = dispatcher ? { options: viaDispatcher(dispatcher) } : {};
  try {
    return await downloadMediaMessage(msg, 'buffer', options, { logger, reuploadRequest: (m) => sock.updateMediaMessage(m) });
  } catch (err) {
    if (!GONE.has(closeCode(err) ?? 0)) throw err;
    logger.info({ id: msg.key.id }, 'media expired on the CDN: asking the phone to upload it again');
    const fresh = await sock.updateMediaMessage(msg);
    return downloadMediaMessage(fresh, 'buffer', options, { logger, reuploadRequest: (m) => Promise.resolve(m) });
  }
}
