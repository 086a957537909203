/**
 * Rule (issue 26, `cli_create_ms`): a CLI command on the files engine loads no PostgreSQL client.
 * Every command that finds no daemon builds one offline (src/daemon/boot.ts); pg, once loaded, also
 * loads Node's fetch (its Cloudflare check touches `Response`): ~65 ms of a ~550 ms
 * `gateway instance create` on the bench's 10,000-instance store. pg is imported where the engine
 * or a command needs it (storage/open.ts, doctor, `init --database`, `storage migrate`).
 * Checked on the import graph esbuild bundles (scripts/bundle.mjs): what the CLI and the offline
 * daemon import statically, not through `await import()`.
 */
import test from 'ava';
import { build, type Metafile } from 'esbuild';

async function metafile(): Promise<Metafile> {
  const r = await build({
    entryPoints: ['src/cli/index.ts'],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    outdir: 'dist/unused',
    splitting: true,
    external: ['@whiskeysockets/baileys', 'protobufjs', 'pino', '@inquirer/prompts', 'qrcode-terminal'],
    logLevel: 'silent',
  });
  return r.metafile;
}

/** The chain of static imports from `from` to the first input whose path contains `target`, or null. */
function staticPath(meta: Metafile, from: string, target: string): string[] | null {
  const prev = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const file = queue.shift()!;
    if (file.includes(target)) {
      const chain: string[] = [];
      for (let at: string | null | undefined = file; at; at = prev.get(at)) chain.unshift(at);
      return chain;
    }
    for (const i of meta.inputs[file]?.imports ?? []) {
      if (i.kind === 'dynamic-import' || prev.has(i.path)) continue;
      prev.set(i.path, file);
      queue.push(i.path);
    }
  }
  return null;
}

test('the CLI and the daemon it builds offline do not import pg until PostgreSQL is used', async (t) => {
  const meta = await metafile();
  t.truthy(meta.inputs['src/daemon/boot.ts'], 'the offline daemon is in the graph');
  t.truthy(staticPath(meta, 'src/storage/open.ts', 'src/storage/files/'), 'the search finds what is imported');
  for (const from of ['src/cli/index.ts', 'src/daemon/boot.ts']) {
    const chain = staticPath(meta, from, 'node_modules/pg/');
    t.is(chain, null, `${from} imports pg through ${chain?.join(' -> ')}`);
  }
});
