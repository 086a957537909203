/**
 * Crash tests for storage ports: a child process opens the storage at a location and runs a
 * scenario (scenarios.ts), printing one line per acknowledged write; the parent kills it with
 * SIGKILL at a chosen moment and reopens the storage to check that everything acknowledged is
 * there (and nothing else is half there).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { StorageLocation } from './engines.js';

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));

export interface CrashRun<T> {
  /** Everything the child acknowledged before it died, in order. */
  acks: T[];
  /** The child's stderr (for failure messages). */
  stderr: string;
}

/**
 * Runs `scenario` in a child and kills it (SIGKILL) once `killWhen(acks)` says so, or when it
 * exits on its own. Rejects if the child fails before it was killed.
 */
export function crashRun<T = unknown>(at: StorageLocation, scenario: string, args: unknown, killWhen: (acks: readonly T[]) => boolean, timeoutMs = 30_000): Promise<CrashRun<T>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import=tsx', CHILD, at.engine, at.address, scenario, JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acks: T[] = [];
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`crash child ${scenario} did not reach its kill point in ${timeoutMs} ms; acks ${acks.length}; stderr: ${stderr}`));
    }, timeoutMs);
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    // Only whole lines: one the child was writing when it died (its stdout is a pipe, and a write
    // larger than the pipe has room for goes out in pieces) was never acknowledged. readline would
    // hand that piece over at the end as a line, and JSON.parse of it threw (seen in CI on Node 24).
    let rest = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('ack ')) continue;
        // Lines the child wrote before it died still count, even when read after the kill.
        acks.push(JSON.parse(line.slice(4)) as T);
        if (!killed && killWhen(acks)) {
          killed = true;
          child.kill('SIGKILL');
        }
      }
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killed || signal === 'SIGKILL') resolve({ acks, stderr });
      else if (code === 0) resolve({ acks, stderr });
      else reject(new Error(`crash child ${scenario} exited with ${code}: ${stderr}`));
    });
  });
}
