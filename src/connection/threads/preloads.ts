import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * The modules the daemon was started to import first (`--import`, on the command line or in
 * NODE_OPTIONS), as URLs a session thread imports before Baileys: Node 20 runs `--require`
 * preloads in worker threads but not `--import` ones, and a preload meant for the daemon
 * (instrumentation, the protocol double's certificate in tests) must see its Baileys too. tsx is
 * left out: a thread started from source registers it itself (domain/worker-thread.ts).
 * Importing a module a thread already ran (Node 22 and later may run them) does nothing again.
 */
export function daemonPreloads(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? '', cwd: string = process.cwd()): string[] {
  const found: string[] = [];
  const scan = (args: readonly string[]) => {
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      if (arg.startsWith('--import=')) found.push(arg.slice('--import='.length));
      else if (arg === '--import' && i + 1 < args.length) found.push(args[++i]!);
    }
  };
  scan(execArgv);
  scan(splitOptions(nodeOptions));
  const urls: string[] = [];
  for (const spec of found) {
    if (spec === 'tsx' || spec.startsWith('tsx/')) continue;
    const url = toUrl(spec, cwd);
    if (!urls.includes(url)) urls.push(url);
  }
  return urls;
}

/** A path (absolute, or relative to the working directory, as Node reads it) as a file URL; a URL or a package name as it is. */
function toUrl(spec: string, cwd: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec) && !/^[a-z]:[\\/]/i.test(spec)) return spec;
  if (isAbsolute(spec) || spec.startsWith('./') || spec.startsWith('../')) return pathToFileURL(resolve(cwd, spec)).href;
  return spec;
}

/** NODE_OPTIONS split as Node splits it: on spaces, double quotes grouping, backslash escaping inside them. */
function splitOptions(text: string): string[] {
  const out: string[] = [];
  let current = '';
  let quoted = false;
  let any = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (ch === '"') {
      quoted = !quoted;
      any = true;
    } else if (ch === ' ' && !quoted) {
      if (any || current) out.push(current);
      current = '';
      any = false;
    } else {
      current += ch;
    }
  }
  if (any || current) out.push(current);
  return out;
}
