import { readdir } from 'node:fs/promises';
import { Gauge, collectDefaultMetrics, type Registry } from 'prom-client';

/**
 * prom-client's default metrics, less what a scrape of a daemon with thousands of sockets pays
 * for with a stalled event loop. Measured while 1,000 accounts paired and the bench scraped every
 * second (CPU profile of the worst event-loop gaps, 2026-11-30): one scrape took up to 52 ms, of
 * which, over the run, 25 % reading /proc/self/fd synchronously (`process_open_fds`) and 42 %
 * building `nodejs_active_handles` and `nodejs_active_requests` (each collector calls
 * `process._getActiveHandles()`, an array of every socket and timer, twice per scrape, for the
 * series by type and the total). Here:
 *
 * - `process_open_fds` reads the directory off the event loop (libuv's thread pool);
 * - `nodejs_active_handles(_total)` and `nodejs_active_requests(_total)` are left out:
 *   `nodejs_active_resources(_total)` (`process.getActiveResourcesInfo()`, the public API that
 *   replaced them, type names only) says the same.
 */
export function collectProcessMetrics(registry: Registry, eventLoopMonitoringPrecision: number): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision });
  for (const name of ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_requests', 'nodejs_active_requests_total']) registry.removeSingleMetric(name);
  if (registry.getSingleMetric('process_open_fds')) {
    registry.removeSingleMetric('process_open_fds');
    new Gauge({
      name: 'process_open_fds',
      help: 'Number of open file descriptors.',
      registers: [registry],
      async collect() {
        try {
          // Minus the one the listing itself holds open, as prom-client counts.
          this.set((await readdir('/proc/self/fd')).length - 1);
        } catch {
          // Not Linux after all, or /proc unreadable: the gauge keeps its last value.
        }
      },
    });
  }
}
