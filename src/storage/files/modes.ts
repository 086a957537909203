import { chmod, lstat, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { DIR_MODE, FILE_MODE } from '../../fs/atomic-write.js';

/** Bounds the walk at start-up; a larger data dir is fixed in part (doctor reports the rest). */
const MAX_ENTRIES = 200_000;

/**
 * Makes the data dir private again: directories 0700, files 0600 (secrets, credentials and
 * customer data live here; a copy with `cp -r` or an umask of 022 leaves them readable by all).
 * Returns what was fixed; a file the daemon's user may not chmod stops start-up with a clear line.
 */
export async function secureModes(dataDir: string): Promise<string[]> {
  const fixed: string[] = [];
  let seen = 0;
  const fix = async (path: string, isDir: boolean, mode: number): Promise<void> => {
    const want = isDir ? DIR_MODE : FILE_MODE;
    const bad = isDir ? (mode & 0o777) !== DIR_MODE : (mode & 0o077) !== 0;
    if (!bad) return;
    try {
      await chmod(path, isDir ? want : mode & 0o700 & ~0o077);
      fixed.push(`${relative(dataDir, path) || '.'} was ${(mode & 0o777).toString(8).padStart(4, '0')}`);
    } catch (err) {
      throw new GatewayError('STORE_LOCKED', `${path} has mode ${(mode & 0o777).toString(8)} and cannot be made private (${errorMessage(err)}); fix its owner and mode (see \`gateway doctor\`)`);
    }
  };
  const root = await lstat(dataDir);
  await fix(dataDir, true, root.mode);
  const stack = [dataDir];
  while (stack.length > 0 && seen < MAX_ENTRIES) {
    const dir = stack.pop()!;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) {
      if (++seen > MAX_ENTRIES) break;
      const path = join(dir, name);
      const st = await lstat(path).catch(() => null);
      if (!st || st.isSymbolicLink() || st.isSocket()) continue;
      await fix(path, st.isDirectory(), st.mode);
      if (st.isDirectory()) stack.push(path);
    }
  }
  return fixed;
}
