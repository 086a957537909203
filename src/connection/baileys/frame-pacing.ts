import { runWhenTurnHasTime, sliceSpent } from '../../domain/time-slice.js';

/** The one method of Baileys' WebSocket client (an EventEmitter) that pacing wraps. */
export interface FrameSource {
  emit(event: string | symbol, ...args: unknown[]): boolean;
}

/**
 * Hands the frames one Baileys socket receives to Baileys at most a slice of the event loop at a
 * time (time-slice.ts). In one poll phase libuv runs the read callback of every socket with data
 * waiting, and each frame's handling (decoding, decrypting, a history sync's events) runs in that
 * callback's microtasks: with hundreds of sockets pairing, one turn of the loop could hold many
 * sockets' frames while every other instance's HTTP requests and timers waited.
 *
 * Baileys' client re-emits the WebSocket's `message` event through its own `emit`; this wraps
 * that method on the one instance. A frame goes to Baileys at once while the turn has time and
 * nothing of this socket waits; else it waits in this socket's queue, which hands over one frame
 * per turn-with-time (each frame's microtasks run before the next in line, of any socket): frames
 * of one socket keep their order, sockets take turns. Nothing is dropped: a frame handed over
 * after Baileys ended the socket finds no listener, as it would have without pacing.
 */
export function paceIncomingFrames(source: FrameSource): void {
  const emit = source.emit;
  const queue: unknown[][] = [];
  const deliverNext = (): void => {
    const args = queue.shift();
    if (args === undefined) return;
    if (queue.length > 0) runWhenTurnHasTime(deliverNext);
    emit.call(source, 'message', ...args);
  };
  source.emit = function pacedEmit(this: FrameSource, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'message') return emit.call(this, event, ...args);
    if (queue.length === 0 && !sliceSpent()) return emit.call(this, event, ...args);
    queue.push(args);
    // One hand-over waits for a turn at a time, while the queue holds anything.
    if (queue.length === 1) runWhenTurnHasTime(deliverNext);
    return true;
  };
}
