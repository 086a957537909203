// WhatsApp's media CDN (mmg.whatsapp.net) on the double's media host, for fetch(). Plain
// JavaScript: preload-child.mjs installs it in child daemons (no tsx there), tests import it too.
//
// Baileys downloads history syncs and app-state snapshots from `https://mmg.whatsapp.net<directPath>`:
// those references carry no URL (HistorySyncNotification, ExternalBlobReference), so the host is
// Baileys' default and cannot be pointed elsewhere by the product's config. A dispatcher that
// connects that host name to the media host (certificate for 127.0.0.1, from the test CA) plays
// the DNS entry. Every other host connects as usual.
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';

/** Host names that are WhatsApp's CDN for the double. */
export const CDN_HOSTS = ['mmg.whatsapp.net'];
const CA_PATH = new URL('./tls/ca.pem', import.meta.url);
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

/** Node's own undici Agent class (not exported by Node; reached through the global dispatcher). */
async function agentClass() {
  if (!globalThis[GLOBAL_DISPATCHER]) await fetch('data:,');
  return globalThis[GLOBAL_DISPATCHER].constructor;
}

/**
 * An undici dispatcher for fetch() whose CDN host names lead to `mediaHost` ("127.0.0.1:PORT") and
 * which trusts the test CA besides the usual roots. Pass it as Baileys' `options.dispatcher`, or
 * install it process-wide with installCdn().
 */
export async function cdnDispatcher(mediaHost) {
  const Agent = await agentClass();
  const [host, port] = mediaHost.split(':');
  // One secure context for every connection: passing `ca` to each tls.connect() would parse the
  // ~140 root certificates again each time (tens of ms of CPU per download).
  const secureContext = tls.createSecureContext({ ca: [...tls.rootCertificates, readFileSync(CA_PATH, 'utf8')] });
  return new Agent({
    connect(opts, callback) {
      const redirect = CDN_HOSTS.includes(opts.hostname);
      const target = redirect ? host : opts.hostname;
      const targetPort = redirect ? Number(port) : Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
      let settled = false;
      const done = (err, socket) => {
        if (settled) return;
        settled = true;
        callback(err, socket);
      };
      const socket =
        opts.protocol === 'https:'
          ? tls.connect({ host: target, port: targetPort, secureContext, ALPNProtocols: ['http/1.1'], ...(net.isIP(target) ? {} : { servername: opts.servername || target }) })
          : net.connect({ host: target, port: targetPort });
      socket.setNoDelay(true);
      socket.once(opts.protocol === 'https:' ? 'secureConnect' : 'connect', () => done(null, socket));
      socket.once('error', (err) => done(err, null));
      return socket;
    },
  });
}

/** Makes every fetch() of this process use cdnDispatcher(mediaHost). */
export async function installCdn(mediaHost) {
  const dispatcher = await cdnDispatcher(mediaHost);
  globalThis[GLOBAL_DISPATCHER] = dispatcher;
  return dispatcher;
}
