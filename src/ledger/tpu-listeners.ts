/**
 * The local cluster's TPUs: for each validator of the schedule, a QUIC server on its own UDP
 * port of the loopback address (ALPN `solana-tpu` only, the validator's own keypair in its
 * certificate when the ledger knows it), with the stake-weighted limits of `TpuQos` and the
 * faults of `TpuFaults`; what they receive goes to the `TpuInbox`, which includes it in the
 * receiving validator's slots. Each address is published for `getClusterNodes`.
 */
import { QuicServerEndpoint } from '../quic/server-endpoint';
import { serverTls } from '../quic/tpu-handshakes';
import { PACKET_DATA_SIZE } from '../validation/wire-transaction';
import type { LocalLedger } from './local-ledger';
import type { TpuFaults } from './tpu-faults';
import { TpuInbox } from './tpu-inbox';
import type { TpuQos } from './tpu-qos';
import { validatorTlsIdentity } from './validator-keypairs';

/** The TPUs listen here only: a local cluster. */
export const TPU_HOST = '127.0.0.1';
/** A connection with nothing received for this long is closed (the client's own idle time-out applies when shorter). */
const IDLE_TIMEOUT_MS = 10_000;

export interface TpuListenersOptions {
  readonly ledger: LocalLedger;
  readonly faults: TpuFaults;
  readonly qos: TpuQos;
  /** 0: an ephemeral port each; else validator i (from 0, in the schedule's order) listens on basePort + i. */
  readonly basePort: number;
  /** Something that should not happen (an execution that threw); the TPUs go on. */
  readonly onError: (error: unknown) => void;
}

export interface TpuListener {
  readonly identity: string;
  readonly port: number;
  /** Whether its certificate carries the validator's own key (the default identities), or a fresh one. */
  readonly ownKey: boolean;
  readonly endpoint: QuicServerEndpoint;
}

export class TpuListeners {
  private constructor(
    readonly listeners: readonly TpuListener[],
    readonly inbox: TpuInbox,
  ) {}

  static async open({ ledger, faults, qos, basePort, onError }: TpuListenersOptions): Promise<TpuListeners> {
    const inbox = new TpuInbox(ledger, faults, onError);
    const listeners: TpuListener[] = [];
    try {
      for (const [index, identity] of ledger.schedule.identities.entries()) {
        const port = basePort === 0 ? 0 : basePort + index;
        const { tls, own } = validatorTlsIdentity(identity);
        const endpoint = await QuicServerEndpoint.open({
          host: TPU_HOST,
          port,
          tls: serverTls(tls),
          maxStreamBytes: PACKET_DATA_SIZE,
          streamWindow: (sender) => (faults.modeOf(identity) === 'starve' ? 0 : qos.streamWindow(sender)),
          maxConnectionsPerIdentity: (sender) => qos.maxConnections(sender),
          // Read by the endpoint at each new connection: the fault applies from the next one.
          get retry() {
            return faults.modeOf(identity) === 'retry';
          },
          idleTimeoutMs: IDLE_TIMEOUT_MS,
          admit: (remote) => (faults.refuses(identity) ? 'connection refused (injected TPU fault)' : qos.admitAddress(remote)),
          onTransaction: (data, sender) => {
            // Streams are credited only once the handshake names the client, so a sender is always known here.
            if (sender === undefined) return;
            try {
              inbox.receive(identity, data, sender);
            } catch (error) {
              onError(error);
            }
          },
        }).catch((error: unknown) => {
          throw new Error(`the TPU of validator ${identity} cannot listen on ${TPU_HOST}:${port}: ${String(error)}`, { cause: error });
        });
        listeners.push({ identity, port: endpoint.port, ownKey: own, endpoint });
        ledger.clusterNodes.setTpuQuic(identity, `${TPU_HOST}:${endpoint.port}`);
      }
    } catch (error) {
      await Promise.all(listeners.map((listener) => listener.endpoint.close()));
      throw error;
    }
    const applyFaults = () => {
      for (const { identity, endpoint } of listeners) {
        endpoint.stalled = faults.modeOf(identity) === 'stall';
        // Starved or no longer: open connections get the window that now applies.
        endpoint.renewStreamWindows();
      }
    };
    faults.onChange(applyFaults);
    applyFaults();
    return new TpuListeners(listeners, inbox);
  }

  portOf(identity: string): number | undefined {
    return this.listeners.find((listener) => listener.identity === identity)?.port;
  }

  async close(): Promise<void> {
    await Promise.all(this.listeners.map((listener) => listener.endpoint.close()));
  }
}
