/**
 * An instance's connection in words: what it is, why (from the `reason` GET /status reports) and
 * what to do about it. The raw reason stays available for support; the badge never shows a raw
 * state like `qr_code_generated`.
 */
export interface Health {
  /** A few words for the badge. */
  label: string;
  /** Why, in a sentence ('' when all is well). */
  cause: string;
  /** What to do ('' when nothing). */
  action: string;
  /** Shown by the list's "needs attention" filter. */
  attention: boolean;
  tone: 'ok' | 'wait' | 'bad';
}

interface Rule {
  test: RegExp;
  cause: string;
  action: string;
}

const RESTART = 'The gateway retries by itself; press Restart connection to try now.';

/** Causes of a disconnection, from the reason's words (src/connection/baileys/reconnect.ts and the sandbox). */
const CAUSES: Rule[] = [
  { test: /ENOTFOUND|EAI_AGAIN|getaddrinfo/i, cause: "WhatsApp cannot be reached: this server's DNS does not resolve web.whatsapp.com.", action: `Check the server's network and DNS (resolv.conf, a firewall). ${RESTART}` },
  {
    test: /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH|timed out|cannot be reached|TLS/i,
    cause: 'WhatsApp cannot be reached from this server (the network or a firewall refuses the connection).',
    action: `Check the server's outgoing connections to web.whatsapp.com:443. ${RESTART}`,
  },
  { test: /proxy/i, cause: "The instance's proxy refused the connection.", action: 'Check the proxy in the instance settings (address, user, password), then press Restart connection.' },
  { test: /logged out|\(401\)|device link invalid|411/i, cause: 'The phone unlinked this device (logged out).', action: 'Pair it again: scan the new QR, or pair with a code.' },
  { test: /403|forbidden|ban/i, cause: 'WhatsApp refused this account (403; often a ban).', action: 'Check the number in the WhatsApp app. Pairing again does not help until WhatsApp allows the account.' },
  { test: /405|version/i, cause: 'WhatsApp refused the WhatsApp Web version the gateway speaks (405).', action: 'Set baileys.version in config.json to a current version and restart the gateway.' },
  { test: /440|replaced/i, cause: 'Another client took over this session (440).', action: 'Close the other WhatsApp Web session, then press Restart connection.' },
  { test: /QR not scanned/i, cause: 'Nobody scanned the QR in time, so pairing stopped.', action: 'Press Restart connection for a new QR, then scan it.' },
  { test: /daemon is not running/i, cause: 'The gateway daemon is not running.', action: 'Start it: gateway start (or systemctl start gateway).' },
  { test: /gave up/i, cause: 'The gateway stopped retrying after repeated failures.', action: 'Fix the cause above if one is named, then press Restart connection.' },
];

export function health(status: string, reason: string | null | undefined, options: { sandbox?: boolean; admin?: boolean } = {}): Health {
  switch (status) {
    case 'connected':
      return { label: 'Connected', cause: '', action: '', attention: false, tone: 'ok' };
    case 'initializing':
      return { label: 'Starting', cause: 'Opening the connection to WhatsApp.', action: '', attention: false, tone: 'wait' };
    case 'qr_code_generated':
      return {
        label: 'Waiting for a scan',
        cause: 'Not linked to a phone yet.',
        action: options.sandbox ? 'A sandbox has no phone: press "Simulate a scan".' : 'On the phone: WhatsApp › Linked devices › Link a device, then scan the QR (or pair with a code).',
        attention: true,
        tone: 'wait',
      };
    case 'requires_premium':
      return {
        label: 'Needs credits or premium',
        cause: 'Premium expired and no credits remain: sends are refused.',
        action: options.admin ? 'Add credits or extend premium on the plan card.' : 'Ask the administrator to add credits or extend premium.',
        attention: true,
        tone: 'bad',
      };
    case 'disconnected': {
      if (options.sandbox && !(reason && /daemon is not running/i.test(reason))) {
        return { label: 'Disconnected', cause: 'The simulated phone is disconnected.', action: 'Press "Simulate a scan" to connect it again.', attention: true, tone: 'bad' };
      }
      const rule = CAUSES.find((r) => reason && r.test.test(reason));
      return {
        label: 'Disconnected',
        cause: rule?.cause ?? (reason ? `The connection closed: ${reason}.` : 'The connection closed.'),
        action: rule?.action ?? RESTART,
        attention: true,
        tone: 'bad',
      };
    }
    default:
      return { label: status || '…', cause: '', action: '', attention: false, tone: 'wait' };
  }
}
