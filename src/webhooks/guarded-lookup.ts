import type { LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { isPrivateAddress, type Resolver } from './target-policy.js';

/**
 * A `lookup` for the HTTP client that resolves through `resolve` and, unless private targets are
 * allowed, refuses a host that resolves to a private address. The policy check before an attempt
 * gives the clear error; this one closes the gap between that check and the connect (DNS
 * rebinding), since the socket connects to exactly the addresses checked here.
 */
export function guardedLookup(resolve: Resolver, allowPrivate: boolean, what = 'webhook host', isPrivate: (address: string) => boolean = isPrivateAddress): LookupFunction {
  return (hostname, options, callback) => {
    const host = hostname.replace(/^\[(.*)\]$/, '$1');
    const addresses = isIP(host) ? Promise.resolve([host]) : resolve(host);
    addresses.then(
      (list) => {
        const bad = list.find(isPrivate);
        if (!allowPrivate && bad !== undefined) {
          // A socket-level error (errno-shaped, for the HTTP client), with the policy's wording.
          const err: NodeJS.ErrnoException = new Error(
            `${what} ${host} resolves to a loopback/private address (${bad}); set webhooks.allowPrivateTargets to true in config.json to allow it`,
          );
          err.code = 'EPRIVATETARGET';
          callback(err, '');
          return;
        }
        const wanted = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const all: LookupAddress[] = list.map((address) => ({ address, family: isIP(address) })).filter((a) => a.family !== 0 && (wanted === 0 || a.family === wanted));
        if (all.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`${what} ${host} has no usable address`);
          err.code = 'ENOTFOUND';
          callback(err, '');
          return;
        }
        if (options.all) callback(null, all);
        else callback(null, all[0]!.address, all[0]!.family);
      },
      (err: unknown) => {
        const e: NodeJS.ErrnoException = err instanceof Error ? err : new Error(String(err));
        e.code ??= 'ENOTFOUND';
        callback(e, '');
      },
    );
  };
}
