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
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Authenticator } from '../auth/authenticator';
import { fastPathRequestsTotal, leanHandoversTotal, leanRequestsTotal, requestDuration } from '../metrics/metrics';
import type { ApiKeyRecord } from '../stores/key-store';
import type { Reply } from '../web/json-rpc-envelope';
import { parseJsonBody } from '../web/json-body';
import type { Admission } from './admission';
import type { Answerer } from './fast-path';
import { readLeanHead } from './lean-request';
import { requestIdFor } from './request-id';

/** How long the lane waits at most for a request (or the rest of one) before handing the connection to node:http. */
const LEAN_WAIT_MS = 1_000;
/** The lane's head limit, well inside node:http's 16 KB: near it, node:http decides. */
const MAX_HEAD_BYTES = 8 * 1024;

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
  const durations = { '/': requestDuration.labels({ path: '/' }), '/submit-batch': requestDuration.labels({ path: '/submit-batch' }) };
  /** Connections in the lane, and whether each is between requests. */
  const open = new Map<Socket, { idle: boolean }>();
  let closing = false;
  const waitMs = Math.min(LEAN_WAIT_MS, Math.floor(options.headersTimeoutMs / 2));

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
    let pending: Buffer | null = null;
    let busy = false;
    let gone = false;
    let waitTimer: NodeJS.Timeout | undefined;
    let begunBeforeClose = true;
    let peerEnded = false;
    /** The key of the request whose head has come and been admitted, until it is served. */
    let admitted: ApiKeyRecord | null = null;
    const state = { idle: true };
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
      socket.pause();
      socket.setTimeout(0);
      if (pending !== null) socket.unshift(pending);
      pending = null;
      toNode(socket);
      socket.resume();
    };
    /** Idle between requests (node:http's keep-alive time-out); a request in progress is not cut off. */
    const onIdle = () => {
      if (state.idle && pending === null) socket.destroy();
    };
    function onData(chunk: Buffer): void {
      // A request that began before the gateway started closing is in progress, as node:http
      // counts it: served, not refused and not cut off.
      if (pending === null && !busy) begunBeforeClose = !closing;
      pending = pending === null ? chunk : Buffer.concat([pending, chunk]);
      state.idle = false;
      if (!busy) serveNext();
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
          waitTimer ??= setTimeout(() => handOver('incomplete'), waitMs);
          return;
        }
        const key = admitted!;
        admitted = null; // the request in progress releases it
        if (waitTimer !== undefined) clearTimeout(waitTimer);
        waitTimer = undefined;
        const bodyText = pending.toString('utf8', read.bodyStart, read.length);
        pending = read.length === pending.length ? null : pending.subarray(read.length);
        busy = true;
        state.idle = false;
        const started = process.hrtime.bigint();
        fastPathRequestsTotal.inc();
        leanRequestsTotal.inc();
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
            socket.write(head(reply.status, requestId, reply, Buffer.byteLength(json), close) + json);
            durations[read.path].observe(Number(process.hrtime.bigint() - started) / 1e9);
            busy = false;
            state.idle = pending === null;
            begunBeforeClose = !closing;
            if (close) {
              leave();
              socket.end();
              return;
            }
            serveNext();
            if (peerEnded && !busy && !gone) {
              leave();
              socket.end();
            }
          })
          // An answer that cannot be written (the connection is gone) ends that connection, never the process.
          .catch(() => socket.destroy());
      }
    }

    /** The client ended its side (node:http's server allows half-open connections): answer what it sent, then end ours. */
    const onEnd = () => {
      peerEnded = true;
      if (!busy) serveNext();
      if (!busy && !gone) {
        leave();
        socket.end();
      }
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
      for (const [socket, state] of open) if (state.idle) socket.destroy();
    },
  };
}
