/**
 * Runs a callback once when a response is done with: when it closes, or when its connection
 * closes, whichever comes first.
 *
 * The response's own 'close' is not enough. Answers to pipelined requests wait in a queue
 * behind the first; if the client closes the connection meanwhile, Node 20 never emits
 * 'close' for the queued ones, and whatever was counted until then (requests in flight, a
 * key's share) would stay counted for good: the key locked out, or the whole gateway
 * answering 503. One 'close' listener per connection serves all its responses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const waiting = new WeakMap<Socket, Set<() => void>>();

export function onResponseDone(response: ServerResponse<IncomingMessage>, done: () => void): void {
  const socket = response.req.socket;
  let settled = false;
  const once = (): void => {
    if (settled) return;
    settled = true;
    waiting.get(socket)?.delete(once);
    response.off('close', once);
    done();
  };
  response.once('close', once);
  if (socket.destroyed) {
    // Already gone: nothing will close again, and nothing will be written.
    queueMicrotask(once);
    return;
  }
  let callbacks = waiting.get(socket);
  if (callbacks === undefined) {
    const created = new Set<() => void>();
    callbacks = created;
    waiting.set(socket, created);
    socket.once('close', () => {
      waiting.delete(socket);
      for (const callback of [...created]) callback();
    });
  }
  callbacks.add(once);
}
