import type { IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';

/**
 * The `ws` package, which Baileys depends on (the project does not, and has no @types/ws): loaded
 * with require and typed here with the few members the double uses, so no ambient `declare module`
 * leaks into the rest of the type-check.
 */
export interface WsSocket {
  readonly readyState: number;
  send(data: Uint8Array, cb?: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
}

export interface WsServer {
  address(): { port: number; address: string } | string | null;
  readonly clients: Set<WsSocket>;
  on(event: 'connection', listener: (socket: WsSocket, request: IncomingMessage) => void): this;
  on(event: 'listening', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  close(cb?: (err?: Error) => void): void;
}

interface WsModule {
  WebSocketServer: new (options: { host: string; port: number; path: string }) => WsServer;
  OPEN: number;
}

const require = createRequire(import.meta.url);
const ws = require('ws') as WsModule & { WebSocket: { OPEN: number } };

export const WebSocketServer = ws.WebSocketServer;
export const WS_OPEN: number = ws.WebSocket.OPEN;
