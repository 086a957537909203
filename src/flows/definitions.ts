import type { Clock } from '../domain/clock.js';
import type { Logger } from 'pino';
import { GatewayError, errorMessage } from '../domain/errors.js';
import { compileFlow, flowRevision, type CompiledFlow } from './compiled.js';
import type { FlowRepository } from '../storage/ports/flows.js';
import type { StoredFlow } from './types.js';
import { validateFlow } from './validate.js';

interface Entry {
  stored: StoredFlow | null;
  compiled: CompiledFlow | null;
}

/**
 * Each instance's flow: read once from flow.json, compiled, and kept; setting or clearing one
 * writes the file and replaces the kept copy (this process is the only writer).
 */
export class FlowDefinitions {
  private readonly loaded = new Map<string, Promise<Entry>>();

  constructor(
    private readonly files: FlowRepository,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  private entry(id: string): Promise<Entry> {
    let e = this.loaded.get(id);
    if (!e) {
      e = this.load(id);
      this.loaded.set(id, e);
      // A file that would not parse is read again next time (it may have been fixed or cleared).
      const failed = e;
      failed.catch(() => {
        if (this.loaded.get(id) === failed) this.loaded.delete(id);
      });
    }
    return e;
  }

  private async load(id: string): Promise<Entry> {
    let stored: StoredFlow | null;
    try {
      stored = await this.files.readFlow(id);
    } catch (err) {
      if (err instanceof GatewayError && err.code === 'STORE_CORRUPT') {
        this.log.error({ instanceId: id, err: errorMessage(err) }, 'stored flow is corrupt; the bot is off for this instance until it is set again or cleared');
        throw new GatewayError('STORE_CORRUPT', err.message, { cause: err, publicMessage: 'the stored flow is corrupt and was left untouched: PUT /api/{id}/flow sets a new one, DELETE /api/{id}/flow clears it' });
      }
      throw err;
    }
    if (!stored) return { stored: null, compiled: null };
    try {
      return { stored, compiled: compileFlow(stored.flow) };
    } catch (err) {
      this.log.error({ instanceId: id, err: errorMessage(err) }, 'stored flow is invalid; the bot is off for this instance until it is set again');
      return { stored, compiled: null };
    }
  }

  async get(id: string): Promise<StoredFlow | null> {
    return (await this.entry(id)).stored;
  }

  async compiled(id: string): Promise<CompiledFlow | null> {
    return (await this.entry(id)).compiled;
  }

  /** Stores a validated flow (validate with parseFlowBody or validateFlow first). */
  async set(id: string, input: unknown): Promise<StoredFlow> {
    const flow = validateFlow(input);
    const stored: StoredFlow = { version: 1, revision: flowRevision(flow), updatedAt: new Date(this.clock.now()).toISOString(), flow };
    await this.files.writeFlow(id, stored);
    this.loaded.set(id, Promise.resolve({ stored, compiled: compileFlow(flow) }));
    this.log.info({ instanceId: id, flow: flow.name, revision: stored.revision }, 'flow set');
    return stored;
  }

  /** Removes the flow (a corrupt one too); false when there was none. */
  async clear(id: string): Promise<boolean> {
    const had = await this.entry(id).then(
      (e) => e.stored !== null,
      (err: unknown) => {
        if (err instanceof GatewayError && err.code === 'STORE_CORRUPT') return true;
        throw err;
      },
    );
    await this.files.clearFlow(id);
    this.loaded.set(id, Promise.resolve({ stored: null, compiled: null }));
    return had;
  }

  forget(id: string): void {
    this.loaded.delete(id);
  }
}
