import { createReadStream } from 'node:fs';
import { copyFile, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { storageError } from '../../domain/errors.js';
import { ensureDir, tempPath, writeFileAtomic, type WriteGuard } from '../../fs/atomic-write.js';

import type { MediaRepository, StoredMedia } from '../ports/media.js';

const SAFE_ID = /^[A-Za-z0-9_-]{1,128}$/;

interface Kept {
  id: string;
  size: number;
  at: number;
}

export interface MediaLimits {
  keepMs: number;
  maxBytesPerInstance: number;
}

/**
 * The bytes of media messages, in and out: DATA_DIR/media/<instanceId>/<messageId> (0600), kept
 * `media.keepDays` and at most `media.maxStoreBytes` per instance (the oldest go first).
 */
export class MediaFiles implements MediaRepository {
  private readonly kept = new Map<string, Promise<Kept[]>>();

  constructor(
    private readonly root: string,
    private readonly limits: MediaLimits,
    private readonly guard: WriteGuard,
  ) {}

  private dir(instanceId: string): string {
    return join(this.root, instanceId);
  }

  private list(instanceId: string): Promise<Kept[]> {
    let l = this.kept.get(instanceId);
    if (!l) {
      l = (async () => {
        const dir = this.dir(instanceId);
        const names = await readdir(dir).catch(() => [] as string[]);
        const out: Kept[] = [];
        for (const name of names) {
          if (!SAFE_ID.test(name)) continue;
          const st = await stat(join(dir, name)).catch(() => null);
          if (st?.isFile()) out.push({ id: name, size: st.size, at: st.mtimeMs });
        }
        return out.sort((a, b) => a.at - b.at);
      })();
      this.kept.set(instanceId, l);
    }
    return l;
  }

  /** Stores bytes (or a file's bytes) for a message; false when it is over the instance's limit alone. */
  async put(instanceId: string, messageId: string, source: { bytes: Uint8Array } | { path: string }, now: number): Promise<boolean> {
    if (!SAFE_ID.test(messageId)) return false;
    const size = 'bytes' in source ? source.bytes.length : (await stat(source.path)).size;
    if (size > this.limits.maxBytesPerInstance) return false;
    const dir = this.dir(instanceId);
    const file = join(dir, messageId);
    // Listed before the file is written: listed after, the new file was in the listing too and the
    // first media of an instance counted twice, the copy with its file's time instead of `now`.
    const list = await this.list(instanceId);
    try {
      await ensureDir(dir);
      if ('bytes' in source) await writeFileAtomic(file, source.bytes, { guard: this.guard });
      else {
        // Copied under a temp name, then renamed: a crash mid-copy never leaves a torn file that
        // would be served as the media (the temp name is swept at the next start).
        const tmp = tempPath(file);
        try {
          await copyFile(source.path, tmp);
          this.guard.assertHeld();
          await rename(tmp, file);
        } catch (err) {
          await rm(tmp, { force: true });
          throw err;
        }
      }
    } catch (err) {
      throw storageError(err, `media of ${messageId}`);
    }
    const i = list.findIndex((x) => x.id === messageId);
    if (i >= 0) list.splice(i, 1);
    list.push({ id: messageId, size, at: now });
    await this.enforce(instanceId, list, now);
    return true;
  }

  /**
   * The file of a kept media message, or null; null too once it is older than `media.keepDays` at
   * `now`, even before the periodic sweep removes it.
   */
  async get(instanceId: string, messageId: string, now?: number): Promise<StoredMedia | null> {
    if (!SAFE_ID.test(messageId)) return null;
    const list = await this.list(instanceId);
    const k = list.find((x) => x.id === messageId);
    if (!k || (now !== undefined && k.at < now - this.limits.keepMs)) return null;
    const path = join(this.dir(instanceId), messageId);
    return { path, size: k.size, stream: () => createReadStream(path) };
  }

  async remove(instanceId: string, messageId: string): Promise<void> {
    const list = await this.list(instanceId);
    const i = list.findIndex((x) => x.id === messageId);
    if (i >= 0) list.splice(i, 1);
    await rm(join(this.dir(instanceId), messageId), { force: true }).catch(() => undefined);
  }

  /** Drops expired media and the oldest past the size limit. */
  async enforce(instanceId: string, list?: Kept[], now = Date.now()): Promise<void> {
    const l = list ?? (await this.list(instanceId));
    const cutoff = now - this.limits.keepMs;
    let total = l.reduce((n, k) => n + k.size, 0);
    while (l.length > 0 && (l[0]!.at < cutoff || total > this.limits.maxBytesPerInstance)) {
      const k = l.shift()!;
      total -= k.size;
      await rm(join(this.dir(instanceId), k.id), { force: true }).catch(() => undefined);
    }
  }

  /** Every instance with media: expiry sweep. */
  async sweep(now: number): Promise<void> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    for (const id of names) await this.enforce(id, undefined, now);
  }

  async removeInstance(instanceId: string): Promise<void> {
    this.kept.delete(instanceId);
    await rm(this.dir(instanceId), { recursive: true, force: true });
  }
}
