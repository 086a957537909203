import { request } from 'node:http';
import { GatewayError, isErrorCode } from '../domain/errors.js';

export interface Reply {
  status: number;
  body: Record<string, unknown>;
}

function failure(body: unknown, status: number): GatewayError {
  const err = (body as { error?: { code?: unknown; message?: unknown; node?: unknown } } | null)?.error;
  const code = isErrorCode(err?.code) ? err.code : 'INTERNAL';
  const message = typeof err?.message === 'string' ? err.message : `the daemon answered HTTP ${status}`;
  return new GatewayError(code, message, typeof err?.node === 'string' ? { detail: { node: err.node } } : undefined);
}

/**
 * One JSON request over a Unix socket (the control socket); resolves with a 2xx body and rejects
 * with the GatewayError of any other answer, so CLI commands get the same codes as the API.
 */
export function callSocket(socketPath: string, method: string, path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      { socketPath, method, path, headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = {};
          try {
            parsed = text === '' ? {} : JSON.parse(text);
          } catch {
            parsed = {};
          }
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve({ status, body: parsed as Record<string, unknown> });
          else reject(failure(parsed, status));
        });
        res.on('error', reject);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => reject(Object.assign(new GatewayError('DAEMON_UNAVAILABLE', `the control socket does not answer (${err.code ?? err.message})`), { errno: err.code })));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export interface LineStream {
  /** Resolves when the daemon ended the stream (or close() was called). */
  readonly closed: Promise<void>;
  close(): void;
}

/** A request whose answer is NDJSON: each line goes to `onLine` as it arrives. */
export function streamSocket(socketPath: string, method: string, path: string, body: unknown, onLine: (value: unknown) => void): Promise<LineStream> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body ?? {});
    const req = request({ socketPath, method, path, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const status = res.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let parsed: unknown = {};
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            // keep {}
          }
          reject(failure(parsed, status));
        });
        return;
      }
      const closed = new Promise<void>((done) => res.on('close', () => done()));
      let buffered = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) !== -1) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          try {
            onLine(JSON.parse(line));
          } catch {
            // a line this client does not understand
          }
        }
      });
      res.on('error', () => undefined);
      resolve({ closed, close: () => req.destroy() });
    });
    req.on('error', (err: NodeJS.ErrnoException) => reject(new GatewayError('DAEMON_UNAVAILABLE', `the control socket does not answer (${err.code ?? err.message})`)));
    req.end(payload);
  });
}
