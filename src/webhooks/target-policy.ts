import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Addresses a webhook must not reach unless `webhooks.allowPrivateTargets` is true. */
function privateRanges(): BlockList {
  const list = new BlockList();
  const v4: Array<[string, number]> = [
    ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
    ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
    ['224.0.0.0', 4], ['240.0.0.0', 4],
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  const v6: Array<[string, number]> = [
    ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['100::', 64],
  ];
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

const BLOCKED = privateRanges();

/** True for loopback, private, link-local (cloud metadata), CGNAT, multicast and reserved addresses. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) return BLOCKED.check(mapped[1]!, 'ipv4');
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

export type Resolver = (host: string) => Promise<string[]>;

/** The system resolver (getaddrinfo, every address). */
export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Checks a webhook URL: http(s) only, no credentials in it, and (unless private targets are
 * allowed) every address its host resolves to is public. Run at set time and again before each
 * delivery, since DNS can change.
 */
export async function checkWebhookUrl(raw: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('webhook URL is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookTargetError('webhook URL must be http:// or https://');
  if (url.username || url.password) throw new WebhookTargetError('webhook URL must not contain credentials; use a webhook secret');
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new WebhookTargetError(`webhook host ${host} does not resolve`);
    }
  }
  const bad = addresses.find(isPrivateAddress);
  if (addresses.length === 0 || bad !== undefined) {
    throw new WebhookTargetError(
      `webhook host ${host} resolves to a loopback/private address (${bad ?? 'none'}); set webhooks.allowPrivateTargets to true in config.json to allow it`,
    );
  }
  return url;
}
