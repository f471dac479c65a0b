/**
 * The market's HTTP client for the node's JSON-RPC and the block engine, as a high-volume
 * sender has one: a few keep-alive connections to the node's origin, fire-and-forget POSTs
 * whose answers are only counted (HTTP 200 with a `result` is ok; anything else, or no
 * answer within the time-out, failed), and at most `MAX_IN_FLIGHT` requests waiting: past
 * it a transaction is shed and counted failed, so a node that hangs costs bounded memory.
 */
import { Pool } from 'undici';
import type { PathCounts } from './tpu-sender';

/** Connections to the node: keep-alive, one request at a time each. */
const CONNECTIONS = 4;
const MAX_IN_FLIGHT = 64;
/** A node that has not answered by then is counted failed and its request dropped. */
const TIMEOUT_MS = 5_000;

export class MarketHttpSender {
  private readonly pool: Pool;
  private inFlight = 0;
  private nextId = 1;
  private closed = false;

  constructor(origin: string) {
    this.pool = new Pool(new URL(origin).origin, {
      connections: CONNECTIONS,
      pipelining: 1,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
  }

  /** POSTs one JSON-RPC call to `path`, counting its outcome in `counts`. Never throws, never rejects. */
  post(path: string, method: string, params: readonly unknown[], counts: PathCounts): void {
    if (this.closed || this.inFlight >= MAX_IN_FLIGHT) {
      counts.failed++;
      return;
    }
    this.inFlight++;
    counts.sent++;
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params });
    void this.call(path, body).then(
      (ok) => {
        this.inFlight--;
        if (ok) counts.ok++;
        else counts.failed++;
      },
      () => {
        this.inFlight--;
        counts.failed++;
      },
    );
  }

  private async call(path: string, body: string): Promise<boolean> {
    const answer = await this.pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) return false;
    const parsed = JSON.parse(text) as unknown;
    return parsed !== null && typeof parsed === 'object' && 'result' in parsed;
  }

  /** Requests still waiting for their answer. */
  get pending(): number {
    return this.inFlight;
  }

  /** Drops what is in flight and closes the connections. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pool.destroy();
  }
}
