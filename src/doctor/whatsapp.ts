import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';
import type { CheckResult } from './types.js';

/** Where Baileys connects when baileys.webSocketUrl is not set. */
export const WHATSAPP_URL = 'wss://web.whatsapp.com/ws/chat';

function tcpConnect(host: string, port: number, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: string | null): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs / 1000} s`));
    socket.once('connect', () => done(null));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

/**
 * Whether WhatsApp's server can be reached from here: DNS and a TCP connect to the host Baileys
 * uses. Without it every WhatsApp instance only retries; the cause (DNS, firewall) is named.
 */
export async function checkWhatsApp(webSocketUrl: string | null, timeoutMs = 5_000): Promise<CheckResult> {
  const url = new URL(webSocketUrl ?? WHATSAPP_URL);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = Number(url.port || (url.protocol === 'wss:' ? 443 : 80));
  const fix = webSocketUrl
    ? 'check baileys.webSocketUrl in config.json'
    : `allow outbound HTTPS (TCP ${port}) to ${host} and check DNS (\`getent hosts ${host}\`); a proxy is not supported yet`;
  try {
    await lookup(host);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    return { name: 'whatsapp', status: 'fail', message: `cannot resolve ${host} (${code}): WhatsApp instances cannot connect`, fix };
  }
  const failed = await tcpConnect(host, port, timeoutMs);
  if (failed !== null) return { name: 'whatsapp', status: 'fail', message: `cannot connect to ${host}:${port} (${failed}): WhatsApp instances cannot connect`, fix };
  return { name: 'whatsapp', status: 'ok', message: `${host}:${port} is reachable` };
}
