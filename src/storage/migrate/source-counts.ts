import { DAY_MS } from '../../domain/clock.js';
import { usageDays } from './copy-usage.js';
import type { GatewayCounts, KindCounts } from './counts.js';
import type { FilesSource } from './source.js';
import { countSourceAudit } from './source-audit.js';
import { listSourceMedia } from './source-media.js';
import { openSourceMessages } from './source-messages.js';

/** What an instance holds in the files, per kind, read again from the files (not from what was copied). */
export async function sourceCounts(source: FilesSource, instanceId: string, now: number): Promise<KindCounts> {
  const { config, paths } = source;
  const messages = await openSourceMessages(paths.messagesDir, instanceId, config.history, now, source.guard);
  const messageCount = messages.ids.length;
  const dropped = messages.droppedWithMedia;
  await messages.close();
  const media = await listSourceMedia(paths.mediaDir, instanceId, config.media.keepDays * DAY_MS, now, dropped);
  const auth = await source.auth.read(instanceId);
  const paired = await source.auth.isPaired(instanceId);
  const credits = source.credits(instanceId);
  const { counts } = await source.outbox.list(instanceId, { limit: 0 });
  const usage = await usageDays(source.usage, instanceId);
  return {
    instance: 1,
    balance: credits.balance,
    spent: credits.spent,
    messages: messageCount,
    media: media.length,
    mediaBytes: media.reduce((n, m) => n + m.size, 0),
    authCreds: auth || paired ? 1 : 0,
    authTables: auth ? Object.keys(auth.keys).length : 0,
    flow: (await source.flows.readFlow(instanceId)) ? 1 : 0,
    handovers: (await source.flows.readHandovers(instanceId)).size,
    conversations: (await source.flows.readConversations(instanceId)).size,
    deliveries: counts.pending + counts.delivered + counts.failed,
    pendingDeliveries: counts.pending,
    usageDays: usage.length,
    usageSent: usage.reduce((n, d) => n + d.sent, 0),
    usageDebited: usage.reduce((n, d) => n + d.debited, 0),
  };
}

/** What the gateway as a whole holds in the files, read again from the files. */
export async function sourceGatewayCounts(source: FilesSource): Promise<GatewayCounts> {
  return {
    instances: source.instances.length,
    owners: Object.keys(source.owners).length,
    operators: (await source.operators.list()).length,
    audit: await countSourceAudit(source.paths.auditDir),
  };
}
