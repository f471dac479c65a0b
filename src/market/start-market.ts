/**
 * The market on the ledger: its wallets funded, and its transactions sent to a sink. By
 * default (`serve --market`, whose embedded ledger has no sockets) the in-process sink hands
 * them to the ledger by the path each was sent by, as the RPC node, the block engine and the
 * TPUs would hand them; `ledger --market` passes the socket sink (socket-sink.ts) instead.
 */
import { computeBundleId } from '../core/bundle-id';
import type { LocalLedger } from '../ledger/local-ledger';
import { restoreValidatedTransaction } from '../validation/validate-transaction';
import { Market, WALLET_LAMPORTS, HOT_ACCOUNT, type MarketSink } from './market';

export function ledgerSink(ledger: LocalLedger): MarketSink {
  return {
    sendTransaction(wire, path, leaders) {
      // The market signed these bytes itself: parsed, not verified again.
      const tx = restoreValidatedTransaction(wire);
      if (path === 'tpu') for (const validator of leaders) ledger.receive(tx, { path: 'tpu', validator });
      else ledger.receive(tx, { path: path === 'rpc' ? 'public' : 'private' });
    },
    sendBundle(wires) {
      const txs = wires.map((wire) => restoreValidatedTransaction(wire));
      ledger.receiveBundle(computeBundleId(txs.map((tx) => tx.signature)), txs);
    },
  };
}

export interface StartMarketOptions {
  /** The weather's seed, to repeat a run. */
  readonly seed?: number;
  /** Where its transactions go; `ledgerSink(ledger)` when not given. */
  readonly sink?: MarketSink;
}

/** Starts the market at `load` times the ledger's block units; undefined when load is 0 or there is no block limit. */
export function startMarket(ledger: LocalLedger, load: number, slotMs: number, options: StartMarketOptions = {}): Market | undefined {
  const blockUnits = ledger.producer?.blockUnits;
  if (load <= 0 || blockUnits === undefined) return undefined;
  const view = {
    get currentSlot() {
      return ledger.currentSlot;
    },
    latestBlockhash: () => ledger.latestBlockhash().blockhash,
    leaderAt: (slot: number) => ledger.schedule.leaderAt(slot),
  };
  const market = new Market(view, options.sink ?? ledgerSink(ledger), { load, blockUnits, slotMs, seed: options.seed });
  ledger.fundAccounts([...market.wallets.map((wallet) => wallet.publicKey), HOT_ACCOUNT], WALLET_LAMPORTS);
  market.start();
  return market;
}
