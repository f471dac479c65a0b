/**
 * The local cluster with its TPUs, in this process: the ledger, its JSON-RPC node (real HTTP
 * on loopback) and a QUIC TPU per validator (real UDP on loopback), as `bin/slipway ledger`
 * composes them; and a QUIC client to talk to the TPUs, collecting each connection's events.
 */
import type { FastifyInstance } from 'fastify';
import type { ConnectionEvent } from '../../src/quic/connection';
import type { TlsSession } from '../../src/quic/tls-session';
import { DEFAULT_SETTINGS } from '../../src/config/settings';
import { FaultInjector } from '../../src/ledger/fault-injector';
import { createLedgerNode } from '../../src/ledger/ledger-node';
import { LocalLedger, type LedgerConfig } from '../../src/ledger/local-ledger';
import { StakeTable } from '../../src/ledger/stake-table';
import { TpuFaults } from '../../src/ledger/tpu-faults';
import { TpuListeners } from '../../src/ledger/tpu-listeners';
import { TpuQos, type TpuQosSettings } from '../../src/ledger/tpu-qos';
import { clientTls, type TlsIdentity } from '../../src/quic/tpu-handshakes';
import { QuicClientEndpoint, type EndpointConnection } from '../../src/quic/udp-endpoint';

export const DEFAULT_QOS: TpuQosSettings = {
  unstakedStreams: DEFAULT_SETTINGS.tpuUnstakedStreams,
  stakedMaxStreams: DEFAULT_SETTINGS.tpuStakedMaxStreams,
  unstakedConnections: DEFAULT_SETTINGS.tpuUnstakedConnections,
  stakedConnections: DEFAULT_SETTINGS.tpuStakedConnections,
  connectionsPerIpPerMinute: DEFAULT_SETTINGS.tpuConnectionsPerIpPerMinute,
};

export interface TpuCluster {
  readonly ledger: LocalLedger;
  readonly url: string;
  readonly tpus: TpuListeners;
  readonly tpuFaults: TpuFaults;
  readonly errors: unknown[];
  close(): Promise<void>;
}

export async function startTpuCluster(
  options: { slotMs?: number; ledger?: Omit<LedgerConfig, 'slotMs'>; stakes?: StakeTable; qos?: Partial<TpuQosSettings> } = {},
): Promise<TpuCluster> {
  const ledger = LocalLedger.open({ slotMs: options.slotMs ?? 50, ...options.ledger });
  ledger.start();
  const tpuFaults = new TpuFaults();
  const node: FastifyInstance = createLedgerNode({ ledger, faults: new FaultInjector(), tpuFaults, logLevel: 'silent' });
  const errors: unknown[] = [];
  const tpus = await TpuListeners.open({
    ledger,
    faults: tpuFaults,
    qos: new TpuQos(options.stakes ?? new StakeTable(), { ...DEFAULT_QOS, ...options.qos }),
    basePort: 0,
    onError: (error) => errors.push(error),
  });
  await node.listen({ host: '127.0.0.1', port: 0 });
  const { port } = node.server.address() as { port: number };
  ledger.clusterNodes.setRpc(`127.0.0.1:${port}`);
  return {
    ledger,
    url: `http://127.0.0.1:${port}`,
    tpus,
    tpuFaults,
    errors,
    async close() {
      await tpus.close();
      await node.close();
      ledger.stop();
    },
  };
}

export type Closed = Extract<ConnectionEvent<number>, { type: 'closed' }>;

export interface TpuConnection {
  readonly entry: EndpointConnection<number>;
  readonly events: ConnectionEvent<number>[];
  /** Resolves at the first event (or state of all events) `until` accepts; rejects after `timeoutMs`. */
  waitFor(until: (event: ConnectionEvent<number>, all: ConnectionEvent<number>[]) => boolean, timeoutMs?: number): Promise<void>;
  /** The close event, once there is one. */
  closed(): Closed | undefined;
  /** The ed25519 key of the server's certificate, once the handshake has checked it. */
  serverIdentity(): Buffer | undefined;
}

/** Connects to a TPU on 127.0.0.1:`port` with `identity` in the client certificate. */
export function connectTpu(
  endpoint: QuicClientEndpoint,
  port: number,
  identity: TlsIdentity,
  options: { alpn?: string; idleTimeoutMs?: number } = {},
): TpuConnection {
  const events: ConnectionEvent<number>[] = [];
  let serverIdentity: Buffer | undefined;
  // The client connection does not report the server's identity: read it from the TLS session's completion.
  const tls = (transportParameters: Buffer) => {
    const { session, start } = clientTls(identity, options.alpn)(transportParameters);
    const receive: TlsSession['receive'] = (level, data) => {
      const output = session.receive(level, data);
      serverIdentity ??= output.complete?.peerIdentity;
      return output;
    };
    return { session: { receive }, start };
  };
  const waiters: { until: (event: ConnectionEvent<number>, all: ConnectionEvent<number>[]) => boolean; resolve: () => void }[] = [];
  const entry = endpoint.connect<number>('127.0.0.1', port, { tls, idleTimeoutMs: options.idleTimeoutMs ?? 5_000 }, (batch) => {
    events.push(...batch);
    for (const event of batch)
      for (const waiter of [...waiters])
        if (waiter.until(event, events)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
  });
  return {
    entry,
    events,
    waitFor: (until, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (events.some((event) => until(event, events))) return resolve();
        const timer = setTimeout(() => reject(new Error(`timed out; events: ${events.map((event) => event.type).join(', ')}`)), timeoutMs);
        waiters.push({ until, resolve: () => (clearTimeout(timer), resolve()) });
      }),
    closed: () => events.find((event): event is Closed => event.type === 'closed'),
    serverIdentity: () => serverIdentity,
  };
}

export const established = (event: ConnectionEvent<number>) => event.type === 'established';
export const closed = (event: ConnectionEvent<number>) => event.type === 'closed';
export const delivered =
  (count = 1) =>
  (_event: ConnectionEvent<number>, all: ConnectionEvent<number>[]) =>
    all.filter((event) => event.type === 'delivered').length >= count;

/** Polls `check` every 10 ms until it holds; throws after `timeoutMs`. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = 'condition'): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what} not met in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
