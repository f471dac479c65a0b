/**
 * The lean lane (setting `leanHttp`): the submission requests of a connection read and
 * answered straight off its socket, without node:http's request and response objects,
 * streams and header bookkeeping, which cost a bare node:http server about 40 % of its CPU
 * time a request (docs/PERFORMANCE.md). Everything outside the lane's narrow form
 * (lean-request.ts), and every refusal on arrival, is node:http's: the connection, with
 * what it has sent so far, is handed to node:http's own connection handler and stays there.
 * The lane only ever answers what the fast path would have answered, by the same functions
 * (`answerRpc`, `answerBatch`); a test sends the same requests both ways and compares.
 *
 * One request at a time per connection, in order (pipelined requests wait their turn). A
 * request that does not arrive whole within `LEAN_WAIT_MS` goes to node:http, whose
 * time-outs then apply; an idle connection is closed after `idleTimeoutMs`.
 */
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Authenticator } from '../auth/authenticator';
import { hotCount, hotSeries } from '../metrics/hot-series';
import {
  fastPathRequestsTotal,
  leanHandoversTotal,
  leanRequestsTotal,
  REQUEST_DURATION_BUCKETS,
  requestDuration,
} from '../metrics/metrics';
import type { ApiKeyRecord } from '../stores/key-store';
import type { Reply } from '../web/json-rpc-envelope';
import { parseJsonBody } from '../web/json-body';
import type { Admission } from './admission';
import type { Answerer } from './fast-path';
import { readLeanHead } from './lean-request';
import { requestIdFor } from './request-id';

/** How long the lane waits at most for a request (or the rest of one) before handing the connection to node:http. */
const LEAN_WAIT_MS = 1_000;
/** The lane's head limit, well inside node:http's (16 KB unless --max-http-header-size says otherwise): near it, node:http decides. */
const MAX_HEAD_BYTES = Math.min(8 * 1024, Math.floor(maxHeaderSize / 2));

export interface LeanLaneOptions {
  readonly authenticator: Authenticator;
  readonly admission: Admission;
  readonly bodyLimit: number;
  readonly idleTimeoutMs: number;
  /** node:http's: the lane waits at most half of it (and a second) for a request to arrive whole. */
  readonly headersTimeoutMs: number;
  readonly routes: { readonly '/': Answerer; readonly '/submit-batch': Answerer };
  readonly failed: (path: '/' | '/submit-batch', error: unknown) => Reply;
}

export interface LeanLane {
  /** Serves the connection, handing it to `toNode` (node:http's connection handler) when it must. */
  adopt(socket: Socket, toNode: (socket: Socket) => void): void;
  /** The gateway is closing: idle connections are closed now, busy ones after their answer. */
  close(): void;
}

/** Node's Date header, made once a second. */
let dateSecond = 0;
let dateText = '';
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(now).toUTCString();
  }
  return dateText;
}

export function createLeanLane(options: LeanLaneOptions): LeanLane {
  const { authenticator, admission, bodyLimit, routes, failed } = options;
  const keepAlive = `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(options.idleTimeoutMs / 1000)}\r\n\r\n`;
  const durations = {
    '/': hotSeries(requestDuration, REQUEST_DURATION_BUCKETS, { path: '/' }),
    '/submit-batch': hotSeries(requestDuration, REQUEST_DURATION_BUCKETS, { path: '/submit-batch' }),
  };
  const fastPathRequests = hotCount(fastPathRequestsTotal);
  const leanRequests = hotCount(leanRequestsTotal);
  /** Connections in the lane, and whether each is between requests. */
  const open = new Map<Socket, { idle: boolean; closing: () => void }>();
  let closing = false;
  const waitMs = Math.min(LEAN_WAIT_MS, Math.floor(options.headersTimeoutMs / 2));
  /** The most held unread per connection: one whole request. */
  const maxBuffered = MAX_HEAD_BYTES + bodyLimit;

  function head(status: number, requestId: string, reply: Reply, length: number, close: boolean): string {
    let text = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\nx-request-id: ${requestId}\r\n`;
    if (reply.headers !== undefined) for (const [name, value] of Object.entries(reply.headers)) text += `${name}: ${value}\r\n`;
    if (reply.body !== undefined) text += `content-type: application/json; charset=utf-8\r\n`;
    // As node:http: a 204 carries no length.
    if (status !== 204) text += `content-length: ${length}\r\n`;
    text += `Date: ${httpDate()}\r\n`;
    return text + (close ? 'Connection: close\r\n\r\n' : keepAlive);
  }

  function adopt(socket: Socket, toNode: (socket: Socket) => void): void {
    if (closing || admission.isOverLimit(socket)) return toNode(socket);
    /** What has come and not been served: one buffer, and the chunks since (merged only when enough has come to read on). */
    let pending: Buffer | null = null;
    let parts: Buffer[] = [];
    let partsLength = 0;
    /** The bytes needed before reading again: the whole request, once its head has been read. */
    let need = 0;
    const buffered = () => (pending?.length ?? 0) + partsLength;
    const merge = () => {
      if (parts.length === 0) return;
      pending = Buffer.concat(pending === null ? parts : [pending, ...parts]);
      parts = [];
      partsLength = 0;
    };
    /** Reads on once what waits fits a request and the client takes its answers. */
    const flow = () => {
      if (!gone && socket.isPaused() && !socket.writableNeedDrain && buffered() <= maxBuffered) socket.resume();
    };
    let busy = false;
    let gone = false;
    let waitTimer: NodeJS.Timeout | undefined;
    let begunBeforeClose = true;
    let peerEnded = false;
    /** The key of the request whose head has come and been admitted, until it is served. */
    let admitted: ApiKeyRecord | null = null;
    const state = {
      idle: true,
      // As node:http counts it, a request is in progress once its head has come: one still
      // arriving when the gateway starts closing is refused (503), not served.
      closing: () => {
        merge();
        if (!busy && admitted === null && (pending === null || pending.indexOf('\r\n\r\n', 0, 'latin1') === -1)) begunBeforeClose = false;
      },
    };
    open.set(socket, state);

    const leave = () => {
      gone = true;
      open.delete(socket);
      if (admitted !== null) {
        // Admitted on its head, never served (handed over, or the connection went): its places are free again.
        admission.leaveLean();
        admission.releaseKey(admitted.id);
        admitted = null;
      }
      if (waitTimer !== undefined) clearTimeout(waitTimer);
      socket.off('data', onData);
      socket.off('timeout', onIdle);
      socket.off('close', leave);
      socket.off('end', onEnd);
    };
    // Until node:http takes the connection (and its errors), a failed socket is simply closed.
    const onError = () => socket.destroy();
    /** node:http takes the connection from here, with whatever it has sent that was not answered. */
    const handOver = (reason: 'form' | 'incomplete' | 'refused') => {
      if (gone) return;
      leanHandoversTotal.inc({ reason });
      leave();
      socket.off('error', onError);
      socket.setTimeout(0);
      merge();
      const rest = pending;
      pending = null;
      if (socket.readableEnded) {
        // The client's FIN has been read and its 'end' emitted: nothing can be unshifted any
        // more, so node:http gets the bytes and the end as the events it listens to.
        toNode(socket);
        if (rest !== null) socket.emit('data', rest);
        socket.emit('end');
        return;
      }
      socket.pause();
      if (rest !== null) socket.unshift(rest);
      toNode(socket);
      socket.resume();
    };
    /** Ends the connection after the last answer, as node:http does (destroySoon): not left half-open for the client to close. */
    const finish = () => {
      leave();
      socket.end();
      if (socket.writableFinished) socket.destroy();
      else socket.once('finish', () => socket.destroy());
    };
    /** Idle between requests (node:http's keep-alive time-out); a request in progress is not cut off. */
    const onIdle = () => {
      if (state.idle && buffered() === 0) socket.destroy();
    };
    function onData(chunk: Buffer): void {
      // A request that began before the gateway started closing is in progress, as node:http
      // counts it: served, not refused and not cut off.
      if (buffered() === 0 && !busy) begunBeforeClose = !closing;
      parts.push(chunk);
      partsLength += chunk.length;
      state.idle = false;
      // A client sending more than a request ahead of its answers waits (nothing grows without bound).
      if (buffered() > maxBuffered) socket.pause();
      if (!busy && buffered() >= need) {
        merge();
        serveNext();
      }
    }

    /** Admits the request whose head has come (as node:http does on its headers), or hands the connection over with the refusal. */
    function admit(apiKey: string): boolean {
      const key = authenticator.authenticate(apiKey);
      // A refusal on arrival (unknown key, over capacity, the key's share taken) is node:http's to answer.
      const entered = key !== null && admission.enterLean(begunBeforeClose);
      if (entered && admission.admitKeyLean(key.id)) {
        admitted = key;
        return true;
      }
      if (entered) admission.leaveLean();
      handOver('refused');
      return false;
    }

    function serveNext(): void {
      while (pending !== null && !busy && !gone) {
        const read = readLeanHead(pending, MAX_HEAD_BYTES, bodyLimit);
        if (read === 'other') return handOver('form');
        if (read !== 'incomplete' && admitted === null && !admit(read.apiKey)) return;
        if (read === 'incomplete' || pending.length < read.length) {
          need = read === 'incomplete' ? 0 : read.length;
          waitTimer ??= setTimeout(() => handOver('incomplete'), waitMs);
          flow();
          return;
        }
        need = 0;
        const key = admitted!;
        admitted = null; // the request in progress releases it
        if (waitTimer !== undefined) clearTimeout(waitTimer);
        waitTimer = undefined;
        const bodyText = pending.toString('utf8', read.bodyStart, read.length);
        pending = read.length === pending.length ? null : pending.subarray(read.length);
        busy = true;
        state.idle = false;
        const started = process.hrtime.bigint();
        fastPathRequests.inc();
        leanRequests.inc();
        const requestId = requestIdFor(read.requestId);
        const body = parseJsonBody(bodyText);
        routes[read.path](body, key, false, { requestId, idempotencyKey: read.idempotencyKey })
          .catch((error: unknown) => failed(read.path, error))
          .then((reply) => {
            admission.leaveLean();
            admission.releaseKey(key.id);
            if (gone || socket.destroyed) return;
            const close = !read.keepAlive || closing || admission.closing;
            const json = reply.body === undefined ? '' : JSON.stringify(reply.body);
            if (!socket.write(head(reply.status, requestId, reply, Buffer.byteLength(json), close) + json)) {
              // The client is not reading its answers: read no more of its requests until it does.
              socket.pause();
              socket.once('drain', flow);
            }
            durations[read.path].observe(Number(process.hrtime.bigint() - started) / 1e9);
            busy = false;
            merge();
            state.idle = pending === null;
            begunBeforeClose = !closing;
            if (close) return finish();
            serveNext();
            flow();
            if (peerEnded && !busy && !gone) finish();
          })
          // An answer that cannot be written (the connection is gone) ends that connection, never the process.
          .catch(() => socket.destroy());
      }
    }

    /** The client ended its side (the server allows half-open connections, node-listener.ts): answer what it sent, then end ours. */
    const onEnd = () => {
      peerEnded = true;
      if (!busy) {
        merge();
        serveNext();
      }
      if (busy || gone) return;
      // A request cut short by the FIN is node:http's to answer (400), as it would have been.
      if (buffered() > 0) handOver('incomplete');
      else finish();
    };

    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', leave);
    socket.on('error', onError);
    socket.setTimeout(options.idleTimeoutMs, onIdle);
    // A connection that sends nothing goes to node:http, which answers 408 after headersTimeoutMs.
    waitTimer = setTimeout(() => handOver('incomplete'), waitMs);
  }

  return {
    adopt,
    close() {
      closing = true;
      for (const [socket, state] of open) {
        if (state.idle) socket.destroy();
        else state.closing();
      }
    },
  };
}
