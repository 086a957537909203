import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** One stored media file of the files engine (DATA_DIR/media/<instanceId>/<messageId>). */
export interface SourceMedia {
  messageId: string;
  path: string;
  size: number;
  /** When it was stored (the file's mtime, as the files engine keeps it), epoch ms. */
  at: number;
}

/** Names the files engine stores media under; temp files of interrupted writes start with a dot. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * An instance's media as the files engine serves it: its files, less those past `media.keepDays`
 * at `now` and those of messages it drops with their media (`skip`), oldest first.
 */
export async function listSourceMedia(mediaDir: string, instanceId: string, keepMs: number, now: number, skip: ReadonlySet<string>): Promise<SourceMedia[]> {
  const dir = join(mediaDir, instanceId);
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const out: SourceMedia[] = [];
  for (const name of names) {
    if (!SAFE_ID.test(name) || skip.has(name)) continue;
    const path = join(dir, name);
    const st = await stat(path);
    if (!st.isFile()) continue;
    const at = Math.floor(st.mtimeMs);
    if (at < now - keepMs) continue;
    out.push({ messageId: name, path, size: st.size, at });
  }
  return out.sort((a, b) => a.at - b.at || a.messageId.localeCompare(b.messageId));
}
