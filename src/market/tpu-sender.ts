/**
 * The market's QUIC client for the cluster's TPUs, as an outside sender has one: its own
 * certificate key (derived from the public seed `slipway market sender`, so unstaked unless
 * a stakes file names it), ALPN `solana-tpu`, one transaction per unidirectional stream, at
 * most one connection per validator, opened on first use and reused. A connection that
 * closes is opened again on the next send; one that fails (refused, reset, stalled, closed
 * by the TPU) is not tried again for a back-off that doubles with each failure (100 ms to
 * 5 s), so a TPU that is down costs a failed count, not a handshake per transaction.
 *
 * The link to each validator is one value (idle, open, backing off); `nextLink` decides
 * what a close does to it, without I/O.
 */
import bs58 from 'bs58';
import type { ConnectionEvent } from '../quic/connection';
import { clientTls, type TlsIdentity } from '../quic/tpu-handshakes';
import { QuicClientEndpoint, type EndpointConnection } from '../quic/udp-endpoint';
import { seededWallet } from './market-wires';

const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5_000;
/** The TPUs close a connection idle for 10 s: a PING every 4 s keeps it between leader turns. */
const KEEP_ALIVE_MS = 4_000;
const IDLE_TIMEOUT_MS = 10_000;
/** Nothing acknowledged for this long: the TPU is stalled, its connection is closed and backs off. */
const UNANSWERED_TIMEOUT_MS = 2_000;
/** Transactions one connection may hold while waiting for stream credit; past it they are counted failed. */
const MAX_WAITING = 512;

/** What one path of the sink did: handed to the socket, answered well, refused or lost. */
export interface PathCounts {
  sent: number;
  ok: number;
  failed: number;
}

export interface TpuAddress {
  readonly host: string;
  readonly port: number;
}

export type Link =
  | { readonly state: 'idle'; readonly failures: number }
  | { readonly state: 'open'; readonly entry: EndpointConnection<number>; readonly failures: number; readonly established: boolean }
  | { readonly state: 'backing-off'; readonly until: number; readonly failures: number };

/** What a connection's close makes of its link: a clean close (ours, or idle with nothing lost) is no failure. */
export function nextLink(link: Link, closed: { by: string; undelivered: number; established: boolean }, now: number): Link {
  const clean = closed.by === 'local' || (closed.by === 'idle' && closed.undelivered === 0 && closed.established);
  if (clean) return { state: 'idle', failures: link.failures };
  const failures = link.failures + 1;
  return { state: 'backing-off', until: now + Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (failures - 1)), failures };
}

/** The market's TPU client identity: the same on every machine, public (a test sender's, not a secret). */
export function marketSenderIdentity(): TlsIdentity & { readonly address: string } {
  const { publicKey, privateKey } = seededWallet('slipway market sender');
  return { publicKey, privateKey, address: bs58.encode(publicKey) };
}

export class MarketTpuSender {
  readonly counts: PathCounts = { sent: 0, ok: 0, failed: 0 };
  private readonly endpoint = QuicClientEndpoint.create();
  private readonly links = new Map<string, Link>();
  private closed = false;

  constructor(
    private readonly addressOf: (validator: string) => TpuAddress | undefined,
    private readonly identity: TlsIdentity = marketSenderIdentity(),
    private readonly clock: () => number = Date.now,
  ) {}

  /** The certificate's public key, base58: what the TPUs know this sender as. */
  get identityAddress(): string {
    return bs58.encode(this.identity.publicKey);
  }

  /** Sends `wire` to `validator`'s TPU, or counts why not. Never throws. */
  send(validator: string, wire: Buffer): void {
    try {
      const entry = this.connection(validator);
      if (entry === undefined || !this.endpoint.send(entry, wire, 0)) this.counts.failed++;
      else this.counts.sent++;
    } catch {
      // The endpoint refuses once closed; a send racing stop() is simply not sent.
      this.counts.failed++;
    }
  }

  /** Each validator's link state, for tests and diagnostics. */
  linkStates(): Record<string, Link['state']> {
    return Object.fromEntries([...this.links].map(([validator, link]) => [validator, link.state]));
  }

  private connection(validator: string): EndpointConnection<number> | undefined {
    if (this.closed) return undefined;
    const address = this.addressOf(validator);
    if (address === undefined) return undefined;
    const link = this.links.get(validator) ?? { state: 'idle', failures: 0 };
    // A connection closed without its event (the endpoint gone) is opened again like an idle one.
    if (link.state === 'open' && !link.entry.connection.isClosed) return link.entry;
    if (link.state === 'backing-off' && link.until > this.clock()) return undefined;
    const entry: EndpointConnection<number> = this.endpoint.connect<number>(
      address.host,
      address.port,
      {
        tls: clientTls(this.identity),
        idleTimeoutMs: IDLE_TIMEOUT_MS,
        keepAliveMs: KEEP_ALIVE_MS,
        unansweredTimeoutMs: UNANSWERED_TIMEOUT_MS,
        maxWaiting: MAX_WAITING,
      },
      (events) => this.onEvents(validator, entry, events),
    );
    this.links.set(validator, { state: 'open', entry, failures: link.failures, established: false });
    return entry;
  }

  private onEvents(validator: string, entry: EndpointConnection<number>, events: ConnectionEvent<number>[]): void {
    for (const event of events) {
      const link = this.links.get(validator);
      const current = link?.state === 'open' && link.entry === entry ? link : undefined;
      if (event.type === 'established') {
        if (current !== undefined) this.links.set(validator, { ...current, established: true });
      } else if (event.type === 'delivered') {
        this.counts.ok++;
        if (current !== undefined && current.failures > 0) this.links.set(validator, { ...current, failures: 0 });
      } else if (event.type === 'stopped') {
        // The TPU refused the stream (its limits, a fault): not delivered.
        this.counts.failed++;
      } else if (event.type === 'closed') {
        this.counts.failed += event.undelivered.length;
        if (current === undefined) continue;
        const closed = { by: event.by, undelivered: event.undelivered.length, established: current.established };
        this.links.set(validator, nextLink(current, closed, this.clock()));
      }
    }
  }

  /** Closes every connection (their CONNECTION_CLOSE sent) and the socket. */
  async close(): Promise<void> {
    this.closed = true;
    await this.endpoint.close();
  }
}
