/**
 * The market over the cluster's own sockets (`bin/slipway ledger --market LOAD`), as outside
 * senders reach it: `tpu` over QUIC to the TPU of each leader it names (tpu-sender.ts), `rpc`
 * as `sendTransaction` to the node's `/`, `engine` as `sendTransaction` to the block engine's
 * `/api/v1/transactions` and bundles as `sendBundle` to `/api/v1/bundles` (http-sender.ts);
 * every one base64, the node's with `skipPreflight` as high-volume senders send. What each
 * path sent, had answered well and failed is counted; failures are counted, never thrown.
 */
import type { MarketPath, MarketSink } from './market';
import { MarketHttpSender } from './http-sender';
import { MarketTpuSender, type PathCounts, type TpuAddress } from './tpu-sender';

export type SinkPath = MarketPath | 'bundle';

export interface SocketSinkOptions {
  /** The node's URL: its origin serves JSON-RPC on `/` and the block engine. */
  readonly rpcUrl: string;
  /** Each validator's TPU (QUIC). */
  readonly tpus: ReadonlyMap<string, TpuAddress>;
}

export interface SocketSink extends MarketSink {
  readonly counts: Readonly<Record<SinkPath, PathCounts>>;
  /** The public key of the certificate the market presents to the TPUs, base58. */
  readonly tpuIdentity: string;
  /** Each validator's TPU connection: idle, open or backing off after a failure. */
  tpuLinks(): Record<string, 'idle' | 'open' | 'backing-off'>;
  /** Closes the QUIC connections and the HTTP pool; what is in flight is dropped. */
  close(): Promise<void>;
}

const SEND_OPTIONS = { encoding: 'base64', skipPreflight: true };
const ENGINE_OPTIONS = { encoding: 'base64' };

export function createSocketSink(options: SocketSinkOptions): SocketSink {
  const tpu = new MarketTpuSender((validator) => options.tpus.get(validator));
  const http = new MarketHttpSender(options.rpcUrl);
  const counts: Record<SinkPath, PathCounts> = {
    tpu: tpu.counts,
    rpc: { sent: 0, ok: 0, failed: 0 },
    engine: { sent: 0, ok: 0, failed: 0 },
    bundle: { sent: 0, ok: 0, failed: 0 },
  };
  return {
    counts,
    tpuIdentity: tpu.identityAddress,
    tpuLinks: () => tpu.linkStates(),
    sendTransaction(wire, path, leaders) {
      if (path === 'tpu') for (const validator of leaders) tpu.send(validator, wire);
      else if (path === 'rpc') http.post('/', 'sendTransaction', [wire.toString('base64'), SEND_OPTIONS], counts.rpc);
      else http.post('/api/v1/transactions', 'sendTransaction', [wire.toString('base64'), ENGINE_OPTIONS], counts.engine);
    },
    sendBundle(wires) {
      http.post('/api/v1/bundles', 'sendBundle', [wires.map((wire) => wire.toString('base64')), ENGINE_OPTIONS], counts.bundle);
    },
    async close() {
      await Promise.all([tpu.close(), http.close()]);
    },
  };
}
