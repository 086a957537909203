import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';
import { startChildDaemon, type ChildDaemon } from '../helpers/child-daemon.js';
import { prepareDataDir, request, tempDir, waitFor, type ApiResponse, type ConfigPatch, type RequestOptions } from '../helpers/daemon.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { FAST_BAILEYS } from './harness.js';
import { childPreloadEnv } from './index.js';
import { mediaTrustEnv } from './media.js';
import { ProtocolDouble, type ProtocolDoubleOptions } from './server.js';

/** A webhook delivery whose signature verified with the instance's secret. */
export interface SignedEvent {
  type: string;
  timestamp: string;
  instanceId: string;
  data: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test convenience: asserted field by field
  webhookId: string;
}

/**
 * The built daemon (`bin/gateway start`, a child process: run `npm run build` first)
 * with one real-Baileys instance paired against the protocol double, its webhook pointed at a
 * real local receiver with a signing secret. The child trusts the double's Noise root (preload)
 * and its media host's test CA (NODE_EXTRA_CA_CERTS); nothing in the product is changed.
 */
export interface GatewayOnDouble {
  double: ProtocolDouble;
  receiver: Receiver;
  dataDir: string;
  daemon: ChildDaemon;
  id: string;
  key: string;
  /** The webhook signing secret (`whsec_…`). */
  whsec: string;
  /** A request to the daemon with the instance key. */
  api(method: string, path: string, options?: Omit<RequestOptions, 'key'>): Promise<ApiResponse>;
  /** Webhook deliveries so far, each verified against the secret (throws if one does not verify). */
  events(type?: string): SignedEvent[];
  /** Waits for a verified delivery that `match` accepts. */
  waitEvent(type: string, match: (e: SignedEvent) => boolean, ms?: number): Promise<SignedEvent>;
  /** SIGKILL, and wait for the process to be gone. */
  kill9(): Promise<void>;
  /** stdout and stderr of every daemon started so far (killed ones included). */
  output(): string;
  /** Starts the daemon again on the same data dir; resolves once the instance is connected. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

function threadsFromEnv(): { sessionThreads?: number } {
  const n = Number(process.env.DOUBLE_SESSION_THREADS ?? 0);
  return n > 0 ? { sessionThreads: n } : {};
}

export async function startGatewayOnDouble(options: { double?: ProtocolDoubleOptions; config?: ConfigPatch } = {}): Promise<GatewayOnDouble> {
  const double = await ProtocolDouble.start(options.double);
  const receiver = await startReceiver();
  const dataDir = await tempDir('gw-double-msg-');
  let daemon: ChildDaemon | undefined;
  const debug = process.env.PROTOCOL_DOUBLE_DEBUG === '1';
  const earlier: string[] = [];
  try {
    const secret = await prepareDataDir(dataDir, {
      webhooks: { allowPrivateTargets: true },
      // No pacing between sends: the tests measure the protocol, not the anti-ban queue.
      sending: { minIntervalMs: 0, jitterMs: 0 },
      plans: { initialCredits: 1000 },
      ...options.config,
      // DOUBLE_SESSION_THREADS=N: the daemon runs its sessions on N threads (to try a suite that way).
      baileys: { ...FAST_BAILEYS, logLevel: debug ? 'debug' : 'warn', ...threadsFromEnv(), ...options.config?.baileys, webSocketUrl: double.url },
      ...(debug ? { logLevel: 'debug' as const } : {}),
    });
    const env = { ...childPreloadEnv(), ...mediaTrustEnv(double.media.hostname) };
    daemon = await startChildDaemon(dataDir, [], env);
    const created = await request(daemon.url, 'POST', '/api/instances/create', { secret, json: { sandbox: false } });
    if (created.status !== 201) throw new Error(`create failed: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.instanceId as string;
    const key = created.body.apiKey as string;
    const whsec = `whsec_${randomBytes(24).toString('base64')}`;
    const hook = await request(daemon.url, 'PUT', `/api/${id}/webhook`, { key, json: { url: receiver.url, secret: whsec, events: null } });
    if (hook.status !== 200) throw new Error(`webhook failed: ${hook.status} ${JSON.stringify(hook.body)}`);

    const status = async (): Promise<string> => (await request(self.daemon.url, 'GET', `/api/${id}/status`, { key })).body.status as string;
    const verifier = new Webhook(whsec);
    // Each delivery is verified once, when first looked at (waitEvent looks every few ms): the
    // verifier also checks the signed timestamp against now, and a file of tests that runs longer
    // than its 5-minute tolerance must not fail on deliveries it verified long ago.
    const verified = new WeakMap<object, SignedEvent>();
    const verify = (r: (typeof receiver.requests)[number]): SignedEvent => {
      let e = verified.get(r);
      if (!e) {
        e = { ...(verifier.verify(r.body, r.headers) as Omit<SignedEvent, 'webhookId'>), webhookId: r.headers['webhook-id'] ?? '' };
        verified.set(r, e);
      }
      return e;
    };
    const self: GatewayOnDouble = {
      double,
      receiver,
      dataDir,
      daemon,
      id,
      key,
      whsec,
      api: (method, path, o = {}) => request(self.daemon.url, method, `/api/${id}${path}`, { ...o, key }),
      events(type) {
        const all = receiver.requests.map(verify);
        return type ? all.filter((e) => e.type === type) : all;
      },
      waitEvent: (type, match, ms = 15_000) => waitFor(() => self.events(type).find(match), ms, `a ${type} webhook`),
      output: () => [...earlier, `${self.daemon.stdout()}\n${self.daemon.stderr()}`].join('\n--- restart ---\n'),
      async kill9() {
        self.daemon.kill('SIGKILL');
        await self.daemon.exited;
      },
      async restart() {
        earlier.push(`${self.daemon.stdout()}\n${self.daemon.stderr()}`);
        self.daemon = await startChildDaemon(dataDir, [], env);
        let last = '';
        try {
          await waitFor(async () => (last = await status()) === 'connected', 20_000, 'connected after the restart');
        } catch (err) {
          throw new Error(`${(err as Error).message} (status ${last}); daemon output:\n${self.daemon.stdout().slice(-3000)}\n${self.daemon.stderr().slice(-3000)}`);
        }
      },
      async close() {
        self.daemon.kill('SIGKILL');
        await self.daemon.exited;
        if (debug) console.error(`[daemon output]\n${self.output()}`);
        await double.close();
        await receiver.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };

    await waitFor(async () => (await status()) === 'qr_code_generated', 20_000, 'a QR');
    const qr = await self.api('GET', '/qr-code');
    await double.scan(qr.body.qr as string);
    await waitFor(async () => (await status()) === 'connected', 20_000, 'connected');
    await double.synced(undefined, 15_000);
    return self;
  } catch (err) {
    daemon?.kill('SIGKILL');
    await daemon?.exited;
    await double.close();
    await receiver.close();
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
}
