import { lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join, relative } from 'node:path';
import type { CheckResult } from './types.js';

/** Bounds the walk: a data dir with more entries than this is checked in part (and says so). */
const MAX_ENTRIES = 100_000;
const SHOWN = 10;

interface Offender {
  path: string;
  problem: string;
}

function mode(st: Stats): string {
  return (st.mode & 0o777).toString(8).padStart(4, '0');
}

/** Exists and is a directory (a symlink to one is fine): the prerequisite of the other checks. */
export function checkDataDirExists(dataDir: string): CheckResult {
  let st: Stats;
  try {
    st = statSync(dataDir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      return { name: 'data-dir', status: 'fail', message: `${dataDir} does not exist`, fix: `run \`gateway init --data-dir ${dataDir}\` (or \`gateway start\`, which initialises it), or pass the right --data-dir / GATEWAY_DATA_DIR` };
    }
    return { name: 'data-dir', status: 'fail', message: `${dataDir}: cannot stat (${code ?? String(err)})`, fix: 'run doctor as the user the gateway runs as (e.g. `sudo -u gateway gateway doctor ...`) or as root' };
  }
  if (!st.isDirectory()) {
    return { name: 'data-dir', status: 'fail', message: `${dataDir} is not a directory`, fix: 'point --data-dir at the gateway data directory' };
  }
  return { name: 'data-dir', status: 'ok', message: `${dataDir} exists` };
}

/**
 * The data dir and every directory in it are 0700, every file has no group or other bits (0600),
 * and everything belongs to the data dir's owner: secrets, credentials and customer data live
 * here, and a file another user created (sudo) is one the service cannot read.
 */
export function checkPermissions(dataDir: string): CheckResult {
  const root = statSync(dataDir);
  const owner = root.uid;
  const offenders: Offender[] = [];
  let seen = 0;
  let truncated = false;

  const inspect = (path: string, st: Stats): void => {
    const rel = relative(dataDir, path) || '.';
    if (st.isDirectory() && (st.mode & 0o777) !== 0o700) offenders.push({ path, problem: `directory ${rel} is ${mode(st)}, should be 0700` });
    if (st.isFile() && (st.mode & 0o077) !== 0) offenders.push({ path, problem: `file ${rel} is ${mode(st)}, should be 0600` });
    if (st.uid !== owner && process.platform !== 'win32') offenders.push({ path, problem: `${rel} belongs to uid ${st.uid}, the data dir to uid ${owner}` });
  };

  inspect(dataDir, root);
  const stack = [dataDir];
  while (stack.length > 0 && !truncated) {
    const dir = stack.pop() as string;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (err) {
      offenders.push({ path: dir, problem: `${relative(dataDir, dir) || '.'}: cannot list (${(err as NodeJS.ErrnoException).code ?? 'error'})` });
      continue;
    }
    for (const name of names) {
      if (++seen > MAX_ENTRIES) {
        truncated = true;
        break;
      }
      const path = join(dir, name);
      let st: Stats;
      try {
        st = lstatSync(path);
      } catch {
        continue; // removed while we walked (a temp file, a released lock)
      }
      if (st.isSymbolicLink()) continue;
      // proper-lockfile's lock directories are empty and transient; their mode leaks nothing.
      if (st.isDirectory() && name.endsWith('.lock')) continue;
      inspect(path, st);
      if (st.isDirectory()) stack.push(path);
    }
  }

  const note = truncated ? ` (checked the first ${MAX_ENTRIES} entries)` : '';
  if (offenders.length === 0) return { name: 'permissions', status: 'ok', message: `directories 0700, files 0600, one owner${note}` };
  const shown = offenders.slice(0, SHOWN).map((o) => o.problem);
  const more = offenders.length > SHOWN ? `; and ${offenders.length - SHOWN} more` : '';
  const wrongOwner = offenders.some((o) => o.problem.includes('belongs to uid'));
  const fixes = [`chmod 700 ${dataDir} && find ${dataDir} -type d -exec chmod 700 {} + && find ${dataDir} -type f -exec chmod 600 {} +`];
  if (wrongOwner) fixes.unshift(`chown -R "$(stat -c %u:%g ${dataDir})" ${dataDir}  (then run CLI commands as the service user, e.g. \`sudo -u gateway gateway ...\`)`);
  return {
    name: 'permissions',
    status: 'fail',
    message: `${offenders.length} entr${offenders.length === 1 ? 'y' : 'ies'} with wrong permissions or owner: ${shown.join('; ')}${more}${note}`,
    fix: fixes.join('; then '),
    files: offenders.map((o) => o.path),
  };
}
