import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { Low, type Adapter } from 'lowdb';
import { GatewayError, errorMessage } from '../../domain/errors.js';
import { writeFileAtomic, type WriteGuard } from '../../fs/atomic-write.js';

/** A store file that will not parse. It is never overwritten: the user must fix or restore it. */
export function corruptStore(file: string, detail: string): GatewayError {
  return new GatewayError(
    'STORE_CORRUPT',
    `${file}: store file is corrupt (${detail}); the gateway refuses to start or write until it is fixed or restored from a backup, and left it untouched`,
    { publicMessage: 'stored data is corrupt and was left untouched; the daemon log names the file' },
  );
}

function parse<T>(file: string, text: string, check: (v: unknown) => v is T): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw corruptStore(file, errorMessage(err));
  }
  if (!check(value)) throw corruptStore(file, 'unexpected shape');
  return value;
}

function unreadable(file: string, err: unknown): GatewayError {
  return new GatewayError('STORE_CORRUPT', `${file}: cannot read (${errorMessage(err)})`);
}

/**
 * A lowdb adapter: strict reads (a torn or foreign file throws instead of starting over empty) and
 * atomic, fsynced writes.
 */
export class AtomicJsonFile<T> implements Adapter<T> {
  constructor(
    readonly file: string,
    private readonly check: (v: unknown) => v is T,
    private readonly guard: WriteGuard,
  ) {}

  async read(): Promise<T | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw unreadable(this.file, err);
    }
    return parse(this.file, text, this.check);
  }

  readSync(): T | null {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw unreadable(this.file, err);
    }
    return parse(this.file, text, this.check);
  }

  async write(data: T): Promise<void> {
    await writeFileAtomic(this.file, JSON.stringify(data), { guard: this.guard });
  }
}

/** A lowdb database over one AtomicJsonFile. */
export function openLow<T>(file: string, check: (v: unknown) => v is T, defaults: () => T, guard: WriteGuard): { db: Low<T>; adapter: AtomicJsonFile<T> } {
  const adapter = new AtomicJsonFile<T>(file, check, guard);
  return { db: new Low<T>(adapter, defaults()), adapter };
}
