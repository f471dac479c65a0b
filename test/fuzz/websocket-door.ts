/**
 * The WebSocket door: hostile frames (hostile-frames.ts) on authenticated sockets, a few
 * at once, on both listeners, the key in the header or in `?api-key=`. Each worker keeps a
 * socket and sends one action at a time, so that the next answer is the action's own
 * (notifications are counted apart); a socket is replaced after a close or every
 * RECYCLE_AFTER actions, which drops its subscriptions. Raw frames go on a socket of their
 * own, then a probe request.
 *
 * A message must get exactly one JSON-RPC answer, never -32603; a ping its pong with the
 * same payload; a close its close. The server may close a socket only for what it cannot
 * read (1002 protocol error, 1007 bad UTF-8, 1009 too large, 1006 cut) or when asked; 1011
 * (internal error) is a failure, as is a socket that neither answers nor closes in time.
 */
import WebSocket from 'ws';
import { STACK_TRACE, count, hasInternalError } from './answer-checks';
import type { DoorRun } from './door-report';
import { framesIn, type FrameAction } from './hostile-frames';

const ANSWER_TIMEOUT_MS = 5_000;
/** Actions on one socket before it is replaced (its subscriptions go with it). */
const RECYCLE_AFTER = 150;
/** Close codes the server may send unasked for what a client sent (RFC 6455 §7.4.1). */
const PROTOCOL_CLOSES = new Set([1002, 1003, 1006, 1007, 1008, 1009]);

type Event =
  { type: 'reply'; text: string; data: unknown } | { type: 'pong'; data: Buffer } | { type: 'close'; code: number; reason: string };

/** A socket and what came back on it, in order. */
class Peer {
  readonly events: Event[] = [];
  private wake: (() => void) | undefined;
  closed: { code: number; reason: string } | undefined;
  readonly subscriptions: number[] = [];
  actions = 0;

  constructor(
    readonly socket: WebSocket,
    private readonly onNotification: () => void,
  ) {
    socket.on('message', (raw: WebSocket.RawData) => {
      const text = raw.toString();
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch {
        data = undefined;
      }
      if (data !== null && typeof data === 'object' && 'method' in data) return void this.onNotification();
      this.push({ type: 'reply', text, data });
    });
    socket.on('pong', (data: Buffer) => this.push({ type: 'pong', data }));
    socket.on('close', (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString() };
      this.push({ type: 'close', code, reason: reason.toString() });
    });
    socket.on('error', () => {});
  }

  private push(event: Event): void {
    this.events.push(event);
    this.wake?.();
  }

  /** The next event, or undefined after `timeoutMs`. */
  async next(timeoutMs = ANSWER_TIMEOUT_MS): Promise<Event | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
    return this.events.shift();
  }

  /** Sends `data` as one message in `parts` frames (the pieces split its bytes; a character may be split too). */
  send(data: string | Buffer, binary: boolean, parts: number): void {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    const size = Math.max(1, Math.ceil(bytes.length / parts));
    for (let i = 0; i < parts; i++) this.socket.send(bytes.subarray(i * size, (i + 1) * size), { binary, fin: i === parts - 1 });
  }
}

/** Opens an authenticated socket: port + 1 for odd workers, the key in the header for even `variant`s. */
function open(run: DoorRun, worker: number, variant: number, onNotification: () => void): Promise<Peer> {
  const port = worker % 2 === 1 ? run.target.wsPort : run.target.port;
  const viaHeader = variant % 2 === 0;
  const url = `ws://127.0.0.1:${port}/${viaHeader ? '' : `?api-key=${encodeURIComponent(run.target.key)}`}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, {
      headers: viaHeader ? { 'x-api-key': run.target.key } : {},
      handshakeTimeout: ANSWER_TIMEOUT_MS,
      maxPayload: 1 << 20,
    });
    const peer = new Peer(socket, onNotification);
    socket.once('open', () => resolve(peer));
    socket.once('unexpected-response', (_request, response) => reject(new Error(`upgrade answered ${response.statusCode}`)));
    socket.once('error', (error) => reject(error));
  });
}

export function sendFrames(run: DoorRun) {
  const { report } = run;
  const peers = new Map<number, Peer>();
  let opened = 0;
  let notifications = 0;
  const notified = () => (notifications += 1);

  /** Checks a reply's text; returns its class. */
  const checkReply = (text: string, data: unknown, fail: (problem: string) => void): string => {
    if (STACK_TRACE.test(text)) fail(`an answer with a stack trace: ${text.slice(0, 200)}`);
    if (data === undefined || data === null || typeof data !== 'object' || (data as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      fail(`an answer that is not a JSON-RPC 2.0 object: ${text.slice(0, 200)}`);
      return 'answer not JSON-RPC';
    }
    if (hasInternalError(data)) {
      report.internalErrors += 1;
      fail(`internal error: ${text.slice(0, 300)}`);
    }
    const { error, result } = data as { error?: { code?: unknown; message?: unknown }; result?: unknown };
    if (error !== undefined && error !== null)
      return `error ${String(error.code)}${String(error.message).includes('(maxSubscriptions') ? ' (a subscription limit)' : ''}`;
    return `result ${typeof result}`;
  };

  /** A close the server chose: allowed for what it cannot read, or as the echo of ours (`asked`). */
  const checkClose = (code: number, reason: string, asked: number | undefined, fail: (problem: string) => void): string => {
    if (STACK_TRACE.test(reason)) fail(`a close reason with a stack trace: ${reason}`);
    if (code === 1011 && asked !== 1011) {
      report.internalErrors += 1;
      fail(`closed with 1011 (internal error): ${reason}`);
    } else if (code !== asked && !PROTOCOL_CLOSES.has(code)) {
      fail(`closed with ${code} (${reason})${asked === undefined ? ' unasked' : ` in answer to a close ${asked}`}`);
    }
    return `closed ${code}`;
  };

  const peerOf = async (worker: number): Promise<Peer> => {
    const held = peers.get(worker);
    if (held !== undefined && held.closed === undefined && held.actions < RECYCLE_AFTER) return held;
    held?.socket.terminate();
    const peer = await open(run, worker, opened++, notified);
    peers.set(worker, peer);
    return peer;
  };

  const send = async (action: FrameAction, index: number, worker: number): Promise<void> => {
    const fail = (problem: string) =>
      report.failures.push({ door: report.door, index, kind: action.kind, problem, sample: describe(action) });
    report.frames += framesIn(action);
    let peer: Peer;
    try {
      peer = action.type === 'raw' ? await open(run, worker, opened++, notified) : await peerOf(worker);
    } catch (error) {
      return void fail(`could not open an authenticated WebSocket: ${(error as Error).message}`);
    }
    peer.actions += 1;
    try {
      await act(peer, action, fail);
    } catch (error) {
      // ws refuses to write on a socket that has just closed: the close is checked, the action counted as not sent.
      if (peer.closed !== undefined) checkClose(peer.closed.code, peer.closed.reason, undefined, fail);
      else fail(`could not send: ${(error as Error).message}`);
      count(report.classes, 'not sent: the socket closed meanwhile');
    }
  };

  const act = async (peer: Peer, action: FrameAction, fail: (problem: string) => void): Promise<void> => {
    switch (action.type) {
      case 'message': {
        let data = action.data;
        if (action.unsubscribeOwn !== undefined)
          data = JSON.stringify({ ...JSON.parse(data as string), params: [peer.subscriptions.pop() ?? 1] });
        peer.send(data, action.binary, action.parts);
        const event = await peer.next();
        if (event === undefined) {
          fail(`no answer within ${ANSWER_TIMEOUT_MS / 1000} s`);
          return void peer.socket.terminate();
        }
        if (event.type !== 'reply') {
          fail(event.type === 'close' ? `closed ${event.code} (${event.reason}) instead of answering` : 'a pong instead of an answer');
          if (event.type === 'close') checkClose(event.code, event.reason, undefined, fail);
          return count(report.classes, `${event.type === 'close' ? `closed ${event.code}` : 'pong'} instead of an answer`);
        }
        const name = checkReply(event.text, event.data, fail);
        const result = (event.data as { result?: unknown }).result;
        if (typeof result === 'number') peer.subscriptions.push(result);
        return count(report.classes, name);
      }
      case 'ping': {
        peer.socket.ping(action.data);
        const event = await peer.next();
        if (event?.type === 'pong' && event.data.equals(action.data)) return count(report.classes, 'pong');
        fail(event === undefined ? 'no pong within 5 s' : `${event.type} instead of a pong with the ping's payload`);
        return void peer.socket.terminate();
      }
      case 'pong':
        peer.socket.pong(action.data);
        return count(report.classes, 'unasked pong sent');
      case 'close': {
        peer.socket.close(action.code, action.reason);
        const event = await peer.next();
        if (event?.type !== 'close') fail(event === undefined ? 'no close within 5 s' : `${event.type} instead of a close`);
        else count(report.classes, `close ${action.code} sent: ${checkClose(event.code, event.reason, action.code, fail)}`);
        return void peer.socket.terminate();
      }
      case 'raw':
        return sendRaw(peer, action, fail);
    }
  };

  /** Raw frames under ws, then a probe: the socket must answer the probe or close with a protocol code. */
  const sendRaw = async (peer: Peer, action: Extract<FrameAction, { type: 'raw' }>, fail: (problem: string) => void): Promise<void> => {
    (peer.socket as unknown as { _socket: import('node:net').Socket })._socket.write(Buffer.concat(action.frames));
    peer.socket.send('{"jsonrpc":"2.0","id":"probe","method":"slotUnsubscribe","params":[999999999]}');
    try {
      for (;;) {
        const event = await peer.next();
        if (event === undefined) {
          if (!action.mayStall) fail(`neither answered the probe nor closed within ${ANSWER_TIMEOUT_MS / 1000} s`);
          return count(report.classes, 'raw: no answer (incomplete frame)');
        }
        if (event.type === 'close') {
          // A close frame of ours is echoed with its code (1011 never is: none is sent).
          const closeFrame = action.frames.some((f) => (f[0]! & 0x0f) === 8);
          return count(
            report.classes,
            `raw: ${checkClose(event.code, event.reason, closeFrame && event.code !== 1011 ? event.code : undefined, fail)}`,
          );
        }
        if (event.type === 'reply') {
          const name = checkReply(event.text, event.data, fail);
          if ((event.data as { id?: unknown }).id === 'probe') return count(report.classes, 'raw: probe answered');
          count(report.classes, `raw: ${name}`);
        }
      }
    } finally {
      peer.socket.terminate();
    }
  };

  return {
    send,
    /** Closes the sockets left open; how many notifications came meanwhile. */
    close(): number {
      for (const peer of peers.values()) peer.socket.terminate();
      return notifications;
    },
  };
}

function describe(action: FrameAction): string {
  switch (action.type) {
    case 'message':
      return `${action.binary ? 'binary' : 'text'} in ${action.parts} part(s): ${JSON.stringify((typeof action.data === 'string' ? action.data : action.data.toString('latin1')).slice(0, 300))}`;
    case 'raw':
      return `raw frames (hex): ${Buffer.concat(action.frames).subarray(0, 200).toString('hex')}`;
    case 'close':
      return `close ${action.code} ${JSON.stringify(action.reason)}`;
    default:
      return `${action.type} ${action.data.toString('hex')}`;
  }
}
