/**
 * A lock holder run as a real child process by the owner-lock tests:
 * `node --import tsx test/helpers/lock-holder.ts '<config json>'`. It runs `config.script`, then
 * one JSON command per stdin line, and reports JSON events on stdout, one per line.
 */
import { linkSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { acquireLock, type HeldLock } from '../../src/storage/files/owner-lock.js';
import { processRunning } from '../../src/storage/files/process-identity.js';

export interface HolderConfig {
  path: string;
  kind?: string;
  staleMs?: number;
  refreshMs?: number;
  waitMs?: number;
  /** Epoch ms: wait until then before the script, so that racers start together. */
  startAt?: number;
  script?: HolderCommand[];
}

export type HolderCommand =
  | { op: 'acquire' }
  | { op: 'read'; file: string }
  | { op: 'commit'; file: string; add: number }
  | { op: 'assert' }
  | { op: 'release' }
  /** Repeated acquire, add 1 to `file` (read, write temp, assertHeld, rename), release. */
  | { op: 'count'; file: string; times: number; holdMs: number; inside: string };

const config = JSON.parse(process.argv[2] ?? '{}') as HolderConfig;
let lock: HeldLock | null = null;
let readValue = 0;

const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ pid: process.pid, ...event })}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const codeOf = (err: unknown) => (err as { code?: string }).code ?? String(err);

async function acquire(): Promise<HeldLock> {
  const held = await acquireLock(config.path, {
    kind: config.kind ?? 'holder',
    ...(config.staleMs !== undefined ? { staleMs: config.staleMs } : {}),
    ...(config.refreshMs !== undefined ? { refreshMs: config.refreshMs } : {}),
    ...(config.waitMs !== undefined ? { waitMs: config.waitMs } : {}),
  });
  held.onLost((err) => emit({ event: 'lost', code: err.code }));
  return held;
}

function readCounter(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8'));
  } catch {
    return 0;
  }
}

/** The commit of a store write: temp file, then the lock check, then the rename. */
function commit(held: HeldLock, file: string, value: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, String(value));
  try {
    held.assertHeld();
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
  renameSync(tmp, file);
}

/**
 * Marks "inside the critical section" with an exclusive file naming us; another live one is an
 * overlap. A killed holder's mark stays behind: its pid is dead, or a zombie its parent has not
 * reaped yet on a loaded machine (kill(pid, 0) still succeeds on a zombie, which once counted as
 * an overlap), so liveness is judged as the lock itself judges it.
 *
 * The mark appears whole or not at all: written to a file of our own, then linked into place
 * (link fails if the mark exists). It was created empty and then written (`wx`): a holder killed
 * between the two left an empty mark, which the next holder counted as "someone else is inside"
 * (CI once failed this way: overlaps [0, 1] with two racers killed at random).
 */
function enter(inside: string): boolean {
  const mine = `${inside}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    linkSync(mine, inside);
    return true;
  } catch {
    let text: string;
    try {
      text = readFileSync(inside, 'utf8');
    } catch {
      return false; // gone again this instant: someone else was inside
    }
    if (processRunning(Number(text), null)) return false; // a live process is inside too
    writeFileSync(inside, String(process.pid)); // left by a killed holder
    return true;
  } finally {
    unlinkSync(mine);
  }
}

async function run(cmd: HolderCommand): Promise<void> {
  try {
    switch (cmd.op) {
      case 'acquire':
        lock = await acquire();
        emit({ event: 'acquired', owner: lock.owner });
        return;
      case 'read':
        readValue = readCounter(cmd.file);
        emit({ event: 'read', value: readValue });
        return;
      case 'commit':
        commit(lock!, cmd.file, readValue + cmd.add);
        emit({ event: 'committed', value: readValue + cmd.add });
        return;
      case 'assert':
        lock!.assertHeld();
        emit({ event: 'assert', ok: true });
        return;
      case 'release':
        await lock!.release();
        emit({ event: 'released' });
        return;
      case 'count': {
        let overlaps = 0;
        for (let i = 0; i < cmd.times; i++) {
          const held = await acquire();
          if (!enter(cmd.inside)) overlaps++;
          const value = readCounter(cmd.file);
          await sleep(cmd.holdMs);
          commit(held, cmd.file, value + 1);
          unlinkSync(cmd.inside);
          await held.release();
          emit({ event: 'counted' });
        }
        emit({ event: 'done', overlaps });
        return;
      }
    }
  } catch (err) {
    emit({ event: 'error', op: cmd.op, code: codeOf(err), message: err instanceof Error ? err.message : String(err) });
  }
}

if (config.startAt !== undefined) await sleep(Math.max(0, config.startAt - Date.now()));
for (const cmd of config.script ?? []) await run(cmd);
emit({ event: 'ready' });
const lines = createInterface({ input: process.stdin });
for await (const line of lines) if (line.trim()) await run(JSON.parse(line) as HolderCommand);
// stdin closed: stay alive until killed (a holder that keeps its lock)
setInterval(() => undefined, 1 << 30);
