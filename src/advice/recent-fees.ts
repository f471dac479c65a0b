/**
 * The fee samples of the last MAX_LOOKBACK_SLOTS slots, read through the reads route and kept
 * here, so that a flood of estimates costs the upstream a few reads a slot, not a few per
 * estimate: at most one refresh per REFRESH_MS (a slot), shared by every request that arrives
 * meanwhile. A refresh asks the slot (`getSlot`) and then the newest blocks not yet read, at
 * most BLOCKS_PER_REFRESH of them, so the window fills over the first slots after start and
 * then takes one block a slot. A slot the node has no block for (skipped, or no longer kept)
 * counts as an empty slot.
 *
 * An estimate answers at once from what is kept, the refresh running behind it for the next
 * one (a slot late at most: the node's answer took a second and more on a busy machine, and
 * every estimate after a slot passed waited for it); only with nothing kept yet does it wait.
 * The landing advice, which follows the blocks one by one, waits for each refresh (`fresh`).
 */
import type { RpcAnswer } from '../core/rpc-types';
import { BLOCK_CONFIG, slotFeesOf, type SlotFees } from './block-fees';

/** Slots kept and looked back over at most (Helius's MAX_LOOKBACK_SLOTS). */
export const MAX_LOOKBACK_SLOTS = 150;
const REFRESH_MS = 400;
const BLOCKS_PER_REFRESH = 4;

/** A read through the reads route (the router's `call`). */
export type Read = (method: string, params: readonly unknown[]) => Promise<RpcAnswer | undefined>;

export class RecentFees {
  /** Newest first. */
  private slots: SlotFees[] = [];
  private readonly known = new Set<number>();
  private refreshing: Promise<void> | undefined;
  private lastRefresh = -Infinity;
  /** Reads made, for tests and metrics. */
  reads = 0;

  constructor(
    private readonly read: Read,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** The newest `lookback` slots' samples kept, a refresh started behind when a slot has passed. Throws when nothing can be read and nothing is kept. */
  async window(lookback: number): Promise<readonly SlotFees[]> {
    const refreshing = this.refresh();
    if (this.slots.length > 0) {
      refreshing.catch(() => {}); // answered from what is kept; the next refresh tries again
      return this.slots.slice(0, lookback);
    }
    await refreshing;
    return this.slots.slice(0, lookback);
  }

  /** As `window`, once a refresh due has ended. Throws when nothing can be read and nothing is kept. */
  async fresh(lookback: number): Promise<readonly SlotFees[]> {
    try {
      await this.refresh();
    } catch (error) {
      if (this.slots.length === 0) throw error;
    }
    return this.slots.slice(0, lookback);
  }

  private refresh(): Promise<void> {
    if (this.refreshing !== undefined) return this.refreshing;
    if (this.now() - this.lastRefresh < REFRESH_MS) return Promise.resolve();
    this.lastRefresh = this.now();
    this.refreshing = this.readNewBlocks().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async readNewBlocks(): Promise<void> {
    const slot = resultOf(await this.call('getSlot', []));
    if (typeof slot !== 'number' || !Number.isSafeInteger(slot)) throw new Error(`getSlot answered ${JSON.stringify(slot)?.slice(0, 60)}`);
    // The slot being produced is not complete: the newest block read is the one before it.
    const wanted: number[] = [];
    for (let s = slot - 1; s >= 0 && s > slot - 1 - MAX_LOOKBACK_SLOTS && wanted.length < BLOCKS_PER_REFRESH; s--) {
      if (!this.known.has(s)) wanted.push(s);
    }
    for (const s of wanted) {
      const answer = await this.call('getBlock', [s, BLOCK_CONFIG]);
      const fees = 'error' in answer ? { slot: s, samples: [] } : slotFeesOf(s, answer.result);
      if (typeof fees === 'string') throw new Error(fees);
      this.keep(fees);
    }
    this.forgetBefore(slot - MAX_LOOKBACK_SLOTS);
  }

  private async call(method: string, params: readonly unknown[]): Promise<RpcAnswer> {
    this.reads++;
    const answer = await this.read(method, params);
    if (answer === undefined) throw new Error(`the reads route does not answer ${method}`);
    return answer;
  }

  private keep(fees: SlotFees): void {
    this.known.add(fees.slot);
    const at = this.slots.findIndex((kept) => kept.slot < fees.slot);
    if (at < 0) this.slots.push(fees);
    else this.slots.splice(at, 0, fees);
  }

  private forgetBefore(oldest: number): void {
    while (this.slots.length > 0 && this.slots[this.slots.length - 1]!.slot < oldest) this.known.delete(this.slots.pop()!.slot);
  }
}

function resultOf(answer: RpcAnswer): unknown {
  if ('error' in answer) throw new Error(`${answer.error.code} ${answer.error.message}`);
  return answer.result;
}
