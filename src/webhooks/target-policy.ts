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
    const embedded = embeddedIpv4(address);
    if (embedded !== null) return BLOCKED.check(embedded, 'ipv4');
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) one. */
function embeddedIpv4(address: string): string | null {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -dotted[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, ''];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right].map((g) => parseInt(g || '0', 16));
  if (groups.length !== 8 || groups.slice(0, 5).some((g) => g !== 0)) return null;
  if (groups[5] !== 0 && groups[5] !== 0xffff) return null;
  if (groups[5] === 0 && groups[6] === 0) return null; // :: and ::1 are IPv6 rules' business
  return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
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
