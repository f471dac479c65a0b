/**
 * The current slot and who leads the slots after it: what the TPU route sends by (to the
 * leaders of the next windows) and what anti-MEV protection gates on. One interface, two
 * sources: the embedded ledger (exact, in process), and Solana RPC nodes
 * (rpc-leader-tracker.ts). A tracker that does not know, or whose knowledge is stale, says
 * so: the TPU route then refuses, and protection holds transactions (fail closed).
 */
import type { LocalLedger } from '../ledger/local-ledger';

export interface LeaderWindow {
  /** The current slot. */
  readonly slot: number;
  /** The leaders of `slot`, `slot + 1`, …: as many as were asked for, or more when the slot may have moved on since it was seen. */
  readonly leaders: readonly string[];
}

export type LeaderView = { readonly known: true; readonly window: LeaderWindow } | { readonly known: false; readonly reason: string };

export interface LeaderTracker {
  /** The current slot and the leaders of the next `slots` slots from it, or why they are not known. */
  upcoming(slots: number): LeaderView;
  close(): Promise<void>;
}

/** The embedded ledger's own schedule: always known, never stale. */
export function createLedgerLeaderTracker(ledger: LocalLedger): LeaderTracker {
  return {
    upcoming(slots) {
      const slot = ledger.currentSlot;
      return { known: true, window: { slot, leaders: ledger.schedule.leaders(slot, slots) } };
    },
    close: async () => {},
  };
}
