// Bundles the gateway (CLI and daemon, one program) into dist/bundle/ with esbuild.
//
// Why: every CLI command that finds no daemon builds the daemon offline, and Node 20 has no
// compile cache, so start-up was module loading: ~600 files (typebox's ESM tree alone ~340, koa,
// prom-client, qrcode, file-type). Measured on the 10,000-instance store of `npm run bench`
// (`gateway instance create`, no daemon): 0.69 s from tsc's per-file output, 0.33 s bundled.
//
// Kept outside the bundle: Baileys (the protocol double's preload patches its exported
// certificate details, and it loads only for WhatsApp instances), protobufjs (Baileys' generated
// decoders check `instanceof Reader`: src/connection/baileys/history-decode.ts hands them readers of
// the one copy in node_modules, not of a bundled second one), pino, and what loads only on
// demand in a terminal (@inquirer/prompts, qrcode-terminal). Their code stays in node_modules.
// Chunks are split at dynamic imports, so the daemon's boot code and the Baileys connection still
// load only when used. The bundle sits two folders deep, like tsc's output, so the
// `new URL('../../package.json', import.meta.url)` paths in src/ resolve the same. The flow regex
// worker (src/flows/regex-worker.ts) and the key-pair worker (src/connection/baileys/key-pair-worker.ts)
// are entries of their own: a worker thread starts from a file, and src/domain/worker-thread.ts
// finds each one next to the chunks.
import { build } from 'esbuild';
import { rm } from 'node:fs/promises';

const outdir = 'dist/bundle';
await rm(outdir, { recursive: true, force: true });
await build({
  entryPoints: { index: 'src/cli/index.ts', 'regex-worker': 'src/flows/regex-worker.ts', 'key-pair-worker': 'src/connection/baileys/key-pair-worker.ts', 'session-worker': 'src/connection/threads/session-worker.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: ['@whiskeysockets/baileys', 'protobufjs', 'pino', '@inquirer/prompts', 'qrcode-terminal'],
  // Bundled CommonJS packages call require() for Node's built-in modules.
  banner: { js: "import { createRequire as __gatewayRequire } from 'node:module'; const require = __gatewayRequire(import.meta.url);" },
  logLevel: 'warning',
});
