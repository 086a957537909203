import { types } from 'node:util';
import { GatewayError, isErrorCode } from '../../domain/errors.js';

/**
 * Calls between the daemon's thread and a session thread (session-threads.ts, session-worker.ts),
 * over a worker's message port: a call is answered once, a note is not answered. Arguments and
 * results are structured-cloned; errors cross as their name, message and gateway code, and a
 * GatewayError is a GatewayError again on the other side (the HTTP layer answers by its code).
 *
 * Not Comlink: each connection's hooks would be a proxy, a MessageChannel of its own (2,000 in
 * ~300 ms; a hook call ~2.5 times ours), and a call 1.5 times ours one after another, 5 times 20,000
 * at once (`node --import=tsx bench/session-rpc.ts`; README, Dependencies).
 */

/** What crosses the port. `s`: the session the message is about, if any. */
export type WireMessage =
  | { k: 'call'; id: number; m: string; a: unknown[] }
  | { k: 'ok'; id: number; v: unknown }
  | { k: 'err'; id: number; e: WireError }
  | { k: 'note'; m: string; a: unknown[] };

export interface WireError {
  name: string;
  message: string;
  code?: string;
  retryAfter?: number;
  detail?: Record<string, string>;
  publicMessage?: string;
}

/** The part of a MessagePort (or a Worker, or parentPort) the endpoint uses. */
export interface Port {
  postMessage(message: WireMessage, transfer?: readonly ArrayBuffer[]): void;
}

export type Handler = (...args: never[]) => unknown;

export function toWireError(err: unknown): WireError {
  if (err instanceof GatewayError) {
    return {
      name: err.name,
      message: err.message,
      code: err.code,
      ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {}),
      ...(err.detail !== undefined ? { detail: { ...err.detail } } : {}),
      ...(err.publicMessage !== undefined ? { publicMessage: err.publicMessage } : {}),
    };
  }
  const e = asError(err);
  return { name: e.name, message: e.message };
}

/** A plain Error for what was thrown (postMessage throws a DOMException, not a native Error). */
function asError(err: unknown): Error {
  if (types.isNativeError(err)) return err;
  if (typeof err === 'object' && err !== null && typeof (err as { message?: unknown }).message === 'string') {
    const e = new Error((err as { message: string }).message);
    const name = (err as { name?: unknown }).name;
    if (typeof name === 'string') e.name = name;
    return e;
  }
  return new Error(String(err));
}

export function fromWireError(wire: WireError): Error {
  if (wire.code !== undefined && isErrorCode(wire.code)) {
    return new GatewayError(wire.code, wire.message, {
      ...(wire.retryAfter !== undefined ? { retryAfter: wire.retryAfter } : {}),
      ...(wire.detail !== undefined ? { detail: wire.detail } : {}),
      ...(wire.publicMessage !== undefined ? { publicMessage: wire.publicMessage } : {}),
    });
  }
  const err = new Error(wire.message);
  err.name = wire.name;
  return err;
}

/** The ArrayBuffers of Uint8Array results that own them whole, handed over instead of copied. */
function transferables(value: unknown): ArrayBuffer[] {
  if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength && value.buffer instanceof ArrayBuffer) return [value.buffer];
  return [];
}

/** One side of the port: its handlers, and the calls it made that wait for an answer. */
export class Endpoint {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  private readonly handlers = new Map<string, Handler>();
  private closedWith: Error | null = null;

  constructor(private readonly port: Port) {}

  /** Registers what answers `method` (a call's result or a note; a throw or rejection goes back as the error). */
  on(method: string, handler: Handler): this {
    this.handlers.set(method, handler);
    return this;
  }

  /** `transfer`: ArrayBuffers among the arguments to move to the other side instead of copying (they are unusable here after). */
  call<T>(method: string, args: unknown[], transfer: readonly ArrayBuffer[] = []): Promise<T> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      try {
        this.port.postMessage({ k: 'call', id, m: method, a: args }, transfer);
      } catch (err) {
        // Arguments that cannot be cloned (a function): the caller's mistake, said to the caller.
        this.pending.delete(id);
        reject(asError(err));
      }
    });
  }

  note(method: string, args: unknown[]): void {
    if (this.closedWith) return;
    this.port.postMessage({ k: 'note', m: method, a: args });
  }

  /** Every message the port delivers comes here. */
  receive(message: WireMessage): void {
    switch (message.k) {
      case 'ok':
      case 'err': {
        const waiting = this.pending.get(message.id);
        if (!waiting) return;
        this.pending.delete(message.id);
        if (message.k === 'ok') waiting.resolve(message.v);
        else waiting.reject(fromWireError(message.e));
        return;
      }
      case 'note': {
        const handler = this.handlers.get(message.m);
        if (!handler) return;
        try {
          const result = (handler as (...args: unknown[]) => unknown)(...message.a);
          if (result instanceof Promise) result.catch(() => undefined);
        } catch {
          // A note has nobody to answer; the handler logs what matters.
        }
        return;
      }
      case 'call':
        void this.answer(message.id, message.m, message.a);
    }
  }

  /** Rejects every call still waiting, and any made from now on (the other side is gone). */
  close(err: Error): void {
    this.closedWith = err;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiting) w.reject(err);
  }

  private async answer(id: number, method: string, args: unknown[]): Promise<void> {
    const handler = this.handlers.get(method);
    let reply: WireMessage;
    let transfer: ArrayBuffer[] = [];
    try {
      if (!handler) throw new Error(`no such call: ${method}`);
      const value = await (handler as (...a: unknown[]) => unknown)(...args);
      reply = { k: 'ok', id, v: value };
      transfer = transferables(value);
    } catch (err) {
      reply = { k: 'err', id, e: toWireError(err) };
    }
    if (this.closedWith) return;
    try {
      this.port.postMessage(reply, transfer);
    } catch (err) {
      this.port.postMessage({ k: 'err', id, e: toWireError(err) });
    }
  }
}
