/**
 * Writing to a subscription socket, shared by the answers to a client's messages and the
 * notifications the poller sends. A socket may close between a request and its answer (or
 * between polls): a frame is sent only while it is open, never queued for a closed one.
 */
import type { WebSocket } from 'ws';

/** WebSocket close codes (RFC 6455 §7.4.1). */
export const CLOSE = { normal: 1000, goingAway: 1001, unsupportedData: 1003, policy: 1008, internal: 1011 } as const;

export function sendMessage(socket: WebSocket, message: unknown): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}
