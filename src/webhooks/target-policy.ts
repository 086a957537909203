import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { GatewayError } from '../domain/errors.js';

/**
 * What a webhook may reach unless `webhooks.allowPrivateTargets` is true: global unicast only.
 * ipaddr.js's `range()` names every special-purpose block (loopback, private, link-local, CGNAT,
 * documentation, benchmarking, multicast, reserved, ...) and calls the rest 'unicast'; the forms
 * that carry an IPv4 address inside an IPv6 one are judged by that IPv4 address (all of them, for
 * Teredo), because that is where the packets end up.
 *
 * The one thing its table lacks, added here: in IPv6 only 2000::/3 is allocated as global unicast
 * (IANA IPv6 address space registry). Everything else that ipaddr.js leaves 'unicast' is
 * unallocated or deprecated, such as the IPv4-compatible ::a.b.c.d (RFC 4291) and the dummy prefix
 * 100:0:0:1::/64 (RFC 9780).
 */
const IPV6_GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3');
/** The well-known NAT64 prefix; the local-use 64:ff9b:1::/48 (RFC 8215) is not global, so refused whole. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

type IPv4 = ipaddr.IPv4;
type IPv6 = ipaddr.IPv6;

function ipv4(hi: number, lo: number): IPv4 {
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

/** The IPv4 addresses an IPv6 address of an embedding form carries, or null for other addresses. */
function embeddedIpv4(address: IPv6, range: string): IPv4[] | null {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d
    case 'rfc6145': // ::ffff:0:a.b.c.d, IPv4-translated
      return [ipv4(p[6], p[7])];
    case 'rfc6052': // 64:ff9b::a.b.c.d; 64:ff9b:1::/48 gives [] so it is refused
      return address.match(NAT64_WELL_KNOWN) ? [ipv4(p[6], p[7])] : [];
    case '6to4': // 2002:AABB:CCDD::/48
      return [ipv4(p[1], p[2])];
    case 'teredo': // 2001:0:<server>:<flags>:<port>:<client, inverted>
      return [ipv4(p[2], p[3]), ipv4(p[6] ^ 0xffff, p[7] ^ 0xffff)];
    default:
      return null;
  }
}

/**
 * Parses what the socket will connect to. Node's isIP decides what is an address (the URL parser
 * and getaddrinfo agree with it); an IPv6 text goes through the URL parser first, because
 * ipaddr.js reads "::a.b.c.d" as "::ffff:a.b.c.d" while the socket connects to ::a.b.c.d.
 */
function parseAddress(text: string): IPv4 | IPv6 | null {
  const bare = text.split('%')[0]!; // a zone id (fe80::1%eth0) changes nothing here
  const family = isIP(bare);
  if (family === 4) return ipaddr.IPv4.parse(bare);
  if (family === 6) return ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  return null;
}

function isGlobalIpv4(address: IPv4): boolean {
  return address.range() === 'unicast';
}

/**
 * True for every address that is not global unicast: loopback, private, link-local (cloud
 * metadata), CGNAT, documentation, benchmarking, multicast, reserved, and IPv6 forms that embed
 * such an IPv4 address. Anything that is not an IP address at all is refused too.
 */
export function isPrivateAddress(address: string): boolean {
  const parsed = parseAddress(address);
  if (parsed === null) return true;
  if (parsed.kind() === 'ipv4') return !isGlobalIpv4(parsed as IPv4);
  const v6 = parsed as IPv6;
  const range = v6.range();
  const embedded = embeddedIpv4(v6, range);
  if (embedded !== null) return embedded.length === 0 || !embedded.every(isGlobalIpv4);
  return range !== 'unicast' || !v6.match(IPV6_GLOBAL_UNICAST);
}

/** A webhook URL the target policy refuses (INVALID_FIELD), with the reason and the setting to change. */
export class WebhookTargetError extends GatewayError {
  constructor(message: string) {
    super('INVALID_FIELD', message);
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
