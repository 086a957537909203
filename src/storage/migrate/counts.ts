import type { Db } from '../postgres/db.js';

/** What an instance holds, per kind: counted in the files and in the target, and compared. */
export interface KindCounts {
  instance: number;
  balance: number;
  spent: number;
  messages: number;
  media: number;
  mediaBytes: number;
  authCreds: number;
  authTables: number;
  flow: number;
  handovers: number;
  conversations: number;
  deliveries: number;
  pendingDeliveries: number;
  usageDays: number;
  usageSent: number;
  usageDebited: number;
}

export const COUNT_NAMES: Record<keyof KindCounts, string> = {
  instance: 'instance record',
  balance: 'credit balance',
  spent: 'credits spent',
  messages: 'messages',
  media: 'media files',
  mediaBytes: 'media bytes',
  authCreds: 'WhatsApp creds',
  authTables: 'Signal key tables',
  flow: 'flow',
  handovers: 'open handovers',
  conversations: 'conversation positions',
  deliveries: 'webhook deliveries',
  pendingDeliveries: 'pending webhook deliveries',
  usageDays: 'days of usage',
  usageSent: 'messages sent (usage)',
  usageDebited: 'credits debited (usage)',
};

/** An instance's rows in the target, counted per kind. */
export async function targetCounts(db: Db, instanceId: string): Promise<KindCounts> {
  const { rows } = await db.query<KindCounts>(
    'counting what was copied',
    `SELECT
      (SELECT count(*) FROM instances WHERE instance_id = $1)::int AS instance,
      COALESCE((SELECT balance FROM credits WHERE instance_id = $1), 0)::bigint AS balance,
      COALESCE((SELECT spent FROM credits WHERE instance_id = $1), 0)::bigint AS spent,
      (SELECT count(*) FROM messages WHERE instance_id = $1)::int AS messages,
      (SELECT count(*) FROM media WHERE instance_id = $1)::int AS media,
      COALESCE((SELECT sum(length(bytes)) FROM media WHERE instance_id = $1), 0)::bigint AS "mediaBytes",
      (SELECT count(*) FROM auth_creds WHERE instance_id = $1)::int AS "authCreds",
      (SELECT count(*) FROM auth_keys WHERE instance_id = $1)::int AS "authTables",
      (SELECT count(*) FROM flows WHERE instance_id = $1)::int AS flow,
      (SELECT count(*) FROM handovers WHERE instance_id = $1)::int AS handovers,
      (SELECT count(*) FROM conversations WHERE instance_id = $1)::int AS conversations,
      (SELECT count(*) FROM deliveries WHERE instance_id = $1)::int AS deliveries,
      (SELECT count(*) FROM deliveries WHERE instance_id = $1 AND status = 'pending')::int AS "pendingDeliveries",
      (SELECT count(*) FROM usage_days WHERE instance_id = $1)::int AS "usageDays",
      COALESCE((SELECT sum(sent) FROM usage_days WHERE instance_id = $1), 0)::int AS "usageSent",
      COALESCE((SELECT sum(debited) FROM usage_days WHERE instance_id = $1), 0)::int AS "usageDebited"`,
    [instanceId],
  );
  return rows[0]!;
}

/** The kinds whose counts differ, as `messages: 120 in the files, 119 in the database`. */
export function differences(files: KindCounts, target: KindCounts): string[] {
  return (Object.keys(COUNT_NAMES) as Array<keyof KindCounts>).filter((k) => files[k] !== target[k]).map((k) => `${COUNT_NAMES[k]}: ${files[k]} in the files, ${target[k]} in the database`);
}

/** What the gateway as a whole holds (not one instance): counted in the files and in the target, and compared. */
export interface GatewayCounts {
  instances: number;
  owners: number;
  operators: number;
  audit: number;
}

const GATEWAY_COUNT_NAMES: Record<keyof GatewayCounts, string> = {
  instances: 'instances',
  owners: "owners' trial records",
  operators: 'operators',
  audit: 'audit log entries',
};

/** The gateway-wide rows in the target. */
export async function targetGatewayCounts(db: Db): Promise<GatewayCounts> {
  const { rows } = await db.query<GatewayCounts>(
    'counting what was copied',
    `SELECT (SELECT count(*) FROM instances)::int AS instances, (SELECT count(*) FROM owners)::int AS owners,
      (SELECT count(*) FROM operators)::int AS operators, (SELECT count(*) FROM audit)::int AS audit`,
  );
  return rows[0]!;
}

/** The gateway-wide kinds whose counts differ, as `operators: 3 in the files, 2 in the database`. */
export function gatewayDifferences(files: GatewayCounts, target: GatewayCounts): string[] {
  return (Object.keys(GATEWAY_COUNT_NAMES) as Array<keyof GatewayCounts>).filter((k) => files[k] !== target[k]).map((k) => `${GATEWAY_COUNT_NAMES[k]}: ${files[k]} in the files, ${target[k]} in the database`);
}
