import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';

/**
 * Notices changes other processes (the CLI) make to the store: inotify on the data dir for speed,
 * plus a poll every 500 ms in case events are lost. Calls `onInstances` when instances.json
 * changes and `onCredits(id)` when an instance's credit file does.
 */
export function watchStore(options: {
  dataDir: string;
  creditsDir: string;
  changedOnDisk: () => boolean;
  onInstances: () => Promise<void>;
  onCredits: (id: string) => void;
  logger: Logger;
}): () => void {
  const { logger } = options;
  let reloading: Promise<void> | null = null;
  let again = false;
  const reload = (): void => {
    if (reloading) {
      again = true;
      return;
    }
    reloading = options
      .onInstances()
      .catch((err: unknown) => logger.error({ err }, 'reloading instances.json failed; keeping the loaded version'))
      .finally(() => {
        reloading = null;
        if (again) {
          again = false;
          reload();
        }
      });
  };
  const watchers: FSWatcher[] = [];
  const tryWatch = (dir: string, onName: (name: string) => void): void => {
    try {
      const w = watch(dir, { persistent: false }, (_event, name) => {
        if (name) onName(name.toString());
      });
      w.on('error', () => undefined);
      watchers.push(w);
    } catch {
      // The poll below still notices changes.
    }
  };
  tryWatch(options.dataDir, (name) => {
    if (name === 'instances.json' && options.changedOnDisk()) reload();
  });
  tryWatch(options.creditsDir, (name) => {
    if (name.endsWith('.json') && !name.startsWith('.')) options.onCredits(name.slice(0, -5));
  });
  const timer = setInterval(() => {
    if (options.changedOnDisk()) reload();
  }, 500);
  timer.unref();
  return () => {
    clearInterval(timer);
    for (const w of watchers) w.close();
  };
}
