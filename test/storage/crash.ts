/**
 * Crash tests for storage ports: a child process opens the storage at a location and runs a
 * scenario (scenarios.ts), printing one line per acknowledged write; the parent kills it with
 * SIGKILL at a chosen moment and reopens the storage to check that everything acknowledged is
 * there (and nothing else is half there).
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
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
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('ack ')) return;
      // Lines the child wrote before it died still count, even when read after the kill.
      acks.push(JSON.parse(line.slice(4)) as T);
      if (!killed && killWhen(acks)) {
        killed = true;
        child.kill('SIGKILL');
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
