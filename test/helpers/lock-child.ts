import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HolderCommand, HolderConfig } from './lock-holder.js';

const HOLDER = fileURLToPath(new URL('./lock-holder.ts', import.meta.url));

export interface HolderEvent {
  pid: number;
  event: string;
  [key: string]: unknown;
}

/** A lock holder in a real child process (see lock-holder.ts), driven over stdin/stdout. */
export class LockChild {
  readonly events: HolderEvent[] = [];
  readonly exited: Promise<number | string>;
  private stderr = '';
  private readonly waiters = new Set<() => void>();

  private constructor(readonly child: ChildProcess) {
    let buffer = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffer += d.toString();
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim()) this.events.push(JSON.parse(line) as HolderEvent);
        for (const wake of this.waiters) wake();
      }
    });
    child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  }

  /** Starts a holder; `wrap` runs it under another command (e.g. `sh -c '... & exec sleep'`). */
  static start(config: HolderConfig, wrap?: (argv: string[]) => string[]): LockChild {
    const argv = [process.execPath, '--import', 'tsx', HOLDER, JSON.stringify(config)];
    const [cmd, ...args] = wrap ? wrap(argv) : argv;
    return new LockChild(spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  get pid(): number {
    return this.child.pid!;
  }

  send(cmd: HolderCommand): void {
    this.child.stdin!.write(`${JSON.stringify(cmd)}\n`);
  }

  /** The first event (from `from` on) that matches; fails after `timeoutMs`. */
  async next(match: (e: HolderEvent) => boolean, timeoutMs = 15_000, from = 0): Promise<HolderEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(this.events)}; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 100);
        this.waiters.add(wake);
      });
    }
  }

  event(name: string, timeoutMs?: number): Promise<HolderEvent> {
    return this.next((e) => e.event === name || e.event === 'error', timeoutMs).then((e) => {
      if (e.event === 'error' && name !== 'error') throw new Error(`holder failed: ${JSON.stringify(e)}`);
      return e;
    });
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** Kills it for good (after a SIGSTOP too) and waits for the exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}
