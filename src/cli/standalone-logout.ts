import type { InstanceRecord } from '../domain/types.js';
import { isPaired } from '../store/auth-files.js';
import type { CliContext } from './context.js';
import { openStandalone } from './standalone.js';

export type LogoutOutcome = 'logged-out' | 'not-paired' | 'daemon-running' | 'unreachable';

/**
 * With no daemon running, logs a paired WhatsApp instance's device out itself: connects with the
 * stored credentials (holding the daemon lock, so no second socket can appear), waits up to
 * `timeoutMs` for the connection, and logs out. Unreachable WhatsApp is reported, not fatal.
 */
export async function logoutStandalone(ctx: CliContext, record: InstanceRecord, timeoutMs = 10_000): Promise<LogoutOutcome> {
  if (record.sandbox || !isPaired(ctx.dataDir, record.id)) return 'not-paired';
  let connected!: () => void;
  const isConnected = new Promise<void>((resolve) => (connected = resolve));
  const opened = await openStandalone(ctx, record, () => ({
    onStatus: (change) => {
      if (change.to === 'connected') connected();
    },
    onQr: () => undefined,
    onMessage: async () => undefined,
  }));
  if (!opened) return 'daemon-running';
  const { connection, release } = opened;
  try {
    connection.start();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const result = await Promise.race([isConnected.then(() => 'connected' as const), timedOut]);
    clearTimeout(timer);
    if (result === 'connected') {
      await connection.logout();
      return 'logged-out';
    }
    await connection.stop();
    return 'unreachable';
  } finally {
    await release();
  }
}
