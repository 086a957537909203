import type { Logger } from 'pino';
import { AuthStore } from './auth-state.js';
import type { AuthStateRepository } from '../../storage/ports/auth-state.js';

/**
 * A connection's handle on its AuthStore: opened on first connect and then kept for the life of
 * the connection (reconnects reuse the same creds object, as Baileys expects), and retried on the
 * next open after a failure so an operator can repair a refused file without a daemon restart.
 */
export class LazyAuthStore {
  private store: AuthStore | null = null;
  private opening: Promise<AuthStore> | null = null;

  constructor(
    private readonly repo: AuthStateRepository,
    readonly instanceId: string,
    private readonly logger: Logger,
    private readonly debounceMs: number | undefined,
  ) {}

  open(): Promise<AuthStore> {
    if (this.store) return Promise.resolve(this.store);
    if (!this.opening) {
      const opening = AuthStore.open(this.repo, this.instanceId, {
        logger: this.logger,
        ...(this.debounceMs === undefined ? {} : { debounceMs: this.debounceMs }),
      });
      this.opening = opening;
      opening.then(
        (store) => {
          this.store = store;
        },
        () => {
          this.opening = null;
        },
      );
    }
    return this.opening;
  }

  /** The store if it is open or being opened, else null; never opens one. */
  async existing(): Promise<AuthStore | null> {
    if (this.store) return this.store;
    if (!this.opening) return null;
    return this.opening.catch(() => null);
  }

  async flush(): Promise<void> {
    const store = await this.existing();
    if (!store) return;
    try {
      await store.flush();
    } catch (err) {
      this.logger.error({ err }, 'flushing credentials failed');
    }
  }

  /** Deletes the credentials, also when they could not be opened (corrupt). */
  async remove(): Promise<void> {
    const store = await this.existing();
    if (store) await store.remove();
    else await this.repo.remove(this.instanceId);
  }
}
