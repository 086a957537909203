import { isIPv4, isIPv6 } from 'node:net';

export type MetricsMode = 'off' | 'local' | 'public';

/**
 * True for a loopback client: 127.0.0.0/8, ::1 and IPv4-mapped 127.x (::ffff:127.0.0.1). The
 * address is the socket's peer, never a forwarded header.
 */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  let a = address.toLowerCase();
  const zone = a.indexOf('%');
  if (zone !== -1) a = a.slice(0, zone);
  if (isIPv4(a)) return a.startsWith('127.');
  if (!isIPv6(a)) return false;
  if (a === '::1' || a === '0:0:0:0:0:0:0:1') return true;
  const mapped = /^(?:0{0,4}:){0,5}:?ffff:(.+)$/.exec(a)?.[1];
  if (mapped === undefined) return false;
  if (isIPv4(mapped)) return mapped.startsWith('127.');
  // Hex form ::ffff:7f00:1
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(mapped);
  return hex !== null && (Number.parseInt(hex[1] ?? '0', 16) >> 8) === 127;
}

/** Whether `address` may read /metrics under `mode`. */
export function metricsAllowed(mode: MetricsMode, address: string | undefined): boolean {
  if (mode === 'public') return true;
  if (mode === 'local') return isLoopbackAddress(address);
  return false;
}
