/**
 * The landing step's client side: one route's gateway, payer and what it sent (RouteRun);
 * the offered load on a fixed schedule; the following of every transaction on the node until
 * it landed or can no longer land.
 */
import bs58 from 'bs58';
import { Pool } from 'undici';
import { routeTransfers, type RouteName } from './landing-gateways';
import type { ServerProcess } from './processes';
import { newSigner, type Signer } from './signed-transactions';

/** The payer's funds: 20 s at 50 a second of about 1,006,000 lamports each is 1 SOL; ten times that. */
const PAYER_LAMPORTS = 10_000_000_000;
/** Each transfer moves at least this much, so that the recipient's first one makes it rent-exempt. */
const FIRST_LAMPORTS = 1_000_000;
/** The blockhash the transfers are signed with is read again this often (5 slots), as a client keeps one fresh. */
const BLOCKHASH_REFRESH_MS = 2_000;
/** Statuses are read this often while waiting, up to 256 signatures a request (a node's limit). */
const STATUS_POLL_MS = 500;
const STATUS_BATCH = 256;
/** Every HTTP call of the step is bounded by this. */
const HTTP_TIMEOUT_MS = 10_000;
/** A gateway that has not accepted its first transaction within this (leaders not known yet, …) fails the step. */
const READY_TIMEOUT_MS = 20_000;

export interface Sent {
  readonly signature: string;
  readonly blockhash: string;
  /** The cluster's slot just before the request. */
  readonly slot: number;
  answerMs?: number;
  accepted?: boolean;
  refusal?: string;
  landedSlot?: number;
  failed?: boolean;
  expired?: boolean;
}

export type Call = <T>(method: string, params?: unknown[]) => Promise<T>;

/** A JSON-RPC error answer, with its code (e.g. -32601: the method is not there). */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number | undefined,
    message: string,
  ) {
    super(`${method}: ${message}`);
  }
}

export function jsonRpc(pool: Pool, headers: Record<string, string> = {}): Call {
  let id = 0;
  return async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const body = (await postJson(pool, { jsonrpc: '2.0', id: ++id, method, params }, headers)) as {
      result?: T;
      error?: { code?: number; message: string };
    };
    if (body.error !== undefined) throw new RpcError(method, body.error.code, body.error.message);
    return body.result as T;
  };
}

export async function postJson(pool: Pool, payload: unknown, headers: Record<string, string>): Promise<unknown> {
  const response = await pool.request({
    path: '/',
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(payload),
    headersTimeout: HTTP_TIMEOUT_MS,
    bodyTimeout: HTTP_TIMEOUT_MS,
  });
  return response.body.json();
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One route under load: its gateway, its payer and what it sent. */
export class RouteRun {
  readonly sent: Sent[] = [];
  private readonly pool: Pool;
  private readonly headers: Record<string, string>;
  private readonly payer: Signer = newSigner();
  private readonly recipient = newSigner().publicKey;
  private signing: { blockhash: string; next: () => string } | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private id = 0;

  constructor(
    readonly route: RouteName,
    readonly gateway: ServerProcess,
  ) {
    this.pool = new Pool(gateway.url, { connections: 8, pipelining: 1 });
    this.headers = { 'x-api-key': gateway.key! };
  }

  async fund(node: Call): Promise<void> {
    await node('requestAirdrop', [bs58.encode(this.payer.publicKey), PAYER_LAMPORTS]);
  }

  /** A transfer signed with `blockhash`, distinct from every other this route made. */
  private sign(blockhash: string): string {
    if (this.signing?.blockhash !== blockhash) {
      const next = routeTransfers(this.route, this.payer, this.recipient, Buffer.from(bs58.decode(blockhash)), FIRST_LAMPORTS + this.id);
      this.signing = { blockhash, next };
    }
    return this.signing.next();
  }

  /** Sends one transaction through the gateway (not awaited: the load is open loop); `record` false for warm-up. */
  send(blockhash: string, slot: number, record = true): Promise<Sent> {
    const tx = this.sign(blockhash);
    const signature = bs58.encode(Buffer.from(tx, 'base64').subarray(1, 65));
    const entry: Sent = { signature, blockhash, slot };
    if (record) this.sent.push(entry);
    const started = performance.now();
    const body = { jsonrpc: '2.0', id: ++this.id, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] };
    const done = postJson(this.pool, body, this.headers)
      .then((answer) => {
        const { result, error } = answer as { result?: string; error?: { code: number; message: string } };
        entry.accepted = result === signature;
        if (!entry.accepted) entry.refusal = error === undefined ? `answered ${JSON.stringify(answer)}` : `${error.code}: ${error.message}`;
      })
      .catch((error: unknown) => {
        entry.accepted = false;
        entry.refusal = error instanceof Error ? error.message : String(error);
      })
      .finally(() => {
        entry.answerMs = performance.now() - started;
        this.inFlight.delete(done);
      });
    this.inFlight.add(done);
    return done.then(() => entry);
  }

  async settle(): Promise<void> {
    await Promise.all(this.inFlight);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Sends until `route`'s gateway accepts one (it may not know the leaders yet right after start). */
export async function untilReady(run: RouteRun, node: Call): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    const { value } = await node<{ value: { blockhash: string } }>('getLatestBlockhash');
    const entry = await run.send(value.blockhash, 0, false);
    if (entry.accepted) return;
    if (Date.now() > deadline)
      throw new Error(`the ${run.route} gateway accepted nothing within ${READY_TIMEOUT_MS / 1000} s: ${entry.refusal}`);
    await sleep(250);
  }
}

/**
 * The latest blockhash, asked of the node again every BLOCKHASH_REFRESH_MS as a client keeps
 * one fresh; `stop()` ends the refreshing.
 */
export async function keepBlockhashFresh(node: Call): Promise<{ current(): string; stop(): void }> {
  let blockhash = (await node<{ value: { blockhash: string } }>('getLatestBlockhash')).value.blockhash;
  const refresher = setInterval(() => {
    node<{ value: { blockhash: string } }>('getLatestBlockhash').then(
      ({ value }) => (blockhash = value.blockhash),
      () => {}, // the previous one stays good for 150 slots
    );
  }, BLOCKHASH_REFRESH_MS);
  return { current: () => blockhash, stop: () => clearInterval(refresher) };
}

/** The offered load: at each tick, the slot asked of the node, then one transfer through every route, in turns. */
export async function offerLoad(runs: RouteRun[], node: Call, seconds: number, ratePerRoute: number): Promise<void> {
  const blockhash = await keepBlockhashFresh(node);
  try {
    const ticks = seconds * ratePerRoute;
    const started = performance.now();
    for (let tick = 0; tick < ticks; tick++) {
      const wait = started + (tick * 1000) / ratePerRoute - performance.now();
      if (wait > 0) await sleep(wait);
      const slot = await node<number>('getSlot', [{ commitment: 'processed' }]);
      // Rotated, so that no route is always the first to reach the cluster in a tick.
      for (let i = 0; i < runs.length; i++) void runs[(tick + i) % runs.length]!.send(blockhash.current(), slot);
    }
  } finally {
    blockhash.stop();
  }
  await Promise.all(runs.map((run) => run.settle()));
}

/**
 * Reads statuses until every transaction landed or can no longer land, or `maxWaitMs` has
 * passed; a blockhash found expired before its transactions' statuses are read settles
 * those that are still not there.
 */
export async function followUntilSettled(all: readonly Sent[], node: Call, maxWaitMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const open = all.filter((entry) => entry.landedSlot === undefined && entry.expired !== true);
    if (open.length === 0 || Date.now() - started > maxWaitMs) break;
    const expiredHashes = new Set<string>();
    for (const blockhash of new Set(open.map((entry) => entry.blockhash))) {
      const { value } = await node<{ value: boolean }>('isBlockhashValid', [blockhash, { commitment: 'processed' }]);
      if (!value) expiredHashes.add(blockhash);
    }
    for (let i = 0; i < open.length; i += STATUS_BATCH) {
      const batch = open.slice(i, i + STATUS_BATCH);
      const { value } = await node<{ value: ({ slot: number; err: unknown } | null)[] }>('getSignatureStatuses', [
        batch.map((entry) => entry.signature),
        { searchTransactionHistory: true },
      ]);
      batch.forEach((entry, j) => {
        const status = value[j];
        if (status !== null && status !== undefined) {
          entry.landedSlot = status.slot;
          entry.failed = status.err !== null;
        } else if (expiredHashes.has(entry.blockhash)) entry.expired = true;
      });
    }
    await sleep(STATUS_POLL_MS);
  }
  return (Date.now() - started) / 1000;
}

/** How the landed transactions of a run reached the cluster, as it recorded them. */
export async function pathsOf(run: RouteRun, node: Call): Promise<Record<string, number>> {
  const landed = run.sent.filter((entry) => entry.landedSlot !== undefined);
  const paths: Record<string, number> = {};
  for (let i = 0; i < landed.length; i += STATUS_BATCH) {
    const batch = landed.slice(i, i + STATUS_BATCH).map((entry) => entry.signature);
    const { value } = await node<{ value: ({ path: string } | null)[] }>('getTransactionExposure', [batch]);
    for (const exposure of value) {
      const key = exposure?.path ?? 'unknown';
      paths[key] = (paths[key] ?? 0) + 1;
    }
  }
  return paths;
}
