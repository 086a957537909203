import { EventEmitter } from 'node:events';
import type { Agent as HttpAgent, ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { fetchDispatcher, type FetchDispatcher, type TunnelOpener } from './proxy-dispatcher.js';
import { PROXY_REFUSED } from './reconnect.js';

/**
 * An instance's proxy (its `proxy` setting), for each way Baileys reaches WhatsApp (rc14):
 * - `agent`: the WebSocket (lib/Socket/Client/websocket.js hands it to `ws`);
 * - `fetchAgent`: media uploads (Utils/messages-media.js, `uploadWithNodeHttp` on Node);
 * - `dispatcher`: everything Baileys fetches with `fetch()`: media downloads
 *   (`downloadContentFromMessage`, the gateway's own in media-download.ts), history sync and
 *   app-state blobs, link previews. Node's fetch takes an undici dispatcher, not an http.Agent,
 *   so it tunnels through the same agent (proxy-dispatcher.ts).
 */
export interface ProxyRoute {
  agent: HttpAgent;
  dispatcher: FetchDispatcher;
}

type ConnectOpts = Parameters<SocksProxyAgent['connect']>[1];

/** An error of the proxy itself: its text becomes the status reason `proxy refused: <text>`. */
export class ProxyRefusedError extends Error {
  readonly code = PROXY_REFUSED;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProxyRefusedError';
  }
}

function refused(err: unknown): ProxyRefusedError {
  if (err instanceof ProxyRefusedError) return err;
  const text = err instanceof Error ? err.message : String(err);
  return new ProxyRefusedError(text.split('\n')[0]!.slice(0, 200) || 'no answer', { cause: err });
}

/**
 * HTTP CONNECT. https-proxy-agent answers a refused CONNECT (407, 403, 502) with a socket that
 * replays the proxy's answer, so the caller would see it as the far end's (`Unexpected server
 * response: 407`, as if WhatsApp said it): here it is an error of the proxy instead.
 */
class HttpConnectAgent extends HttpsProxyAgent<string> {
  override async connect(req: ClientRequest, opts: ConnectOpts): Promise<Socket> {
    let answer: string | null = null;
    const onConnect = (res: { statusCode: number; statusText: string }): void => {
      if (res.statusCode !== 200) answer = `HTTP ${res.statusCode} ${res.statusText}`.trim();
    };
    req.once('proxyConnect', onConnect);
    let socket: Socket;
    try {
      socket = await super.connect(req, opts);
    } catch (err) {
      throw refused(err);
    } finally {
      req.off('proxyConnect', onConnect);
    }
    if (answer !== null) {
      socket.destroy();
      throw new ProxyRefusedError(answer);
    }
    return socket;
  }
}

/** SOCKS5: whatever fails before the tunnel stands (connect, authentication, the proxy's reply) is the proxy's. */
class Socks5Agent extends SocksProxyAgent {
  override async connect(req: ClientRequest, opts: ConnectOpts): Promise<Socket> {
    try {
      return await super.connect(req, opts);
    } catch (err) {
      throw refused(err);
    }
  }
}

/** The agent for a proxy URL the settings checked (http:, https: or socks5:). */
function agentFor(url: string): HttpConnectAgent | Socks5Agent {
  // socks5 here means the proxy resolves host names (socks5h): WhatsApp's names are looked up
  // where the traffic leaves, and a host that cannot resolve them locally still works.
  if (url.startsWith('socks5:')) return new Socks5Agent(`socks5h:${url.slice('socks5:'.length)}`);
  return new HttpConnectAgent(url);
}

/** A tunnel to host:port through the agent, TLS on top for https, resolved once usable. */
function tunnelThrough(agent: HttpConnectAgent | Socks5Agent): TunnelOpener {
  return async ({ host, port, secure, servername }) => {
    // The agents want the request they serve; nothing here is one, and they only emit on it.
    const req = Object.assign(new EventEmitter(), { destroy: () => undefined }) as unknown as ClientRequest;
    const opts = { host, port, secureEndpoint: secure, ALPNProtocols: ['http/1.1'], ...(servername ? { servername } : {}) } as ConnectOpts;
    const socket = await agent.connect(req, opts);
    if (!(socket instanceof TLSSocket) || !secure) return socket;
    // Wait for the handshake, so a certificate error fails this connect and not a later read.
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('secureConnect', () => {
        socket.off('error', reject);
        resolve();
      });
    });
    return socket;
  };
}

/** The route of one connect through `url` (a fresh agent each time: a changed proxy applies at once). */
export async function proxyRoute(url: string): Promise<ProxyRoute> {
  const agent = agentFor(url);
  return { agent, dispatcher: await fetchDispatcher(tunnelThrough(agent)) };
}
