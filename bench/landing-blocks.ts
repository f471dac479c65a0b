/**
 * What landed in each slot, read from the cluster's node while the landing benchmark runs: the
 * lowest scheduling priority of a transaction that landed (the yardstick of overpayment), its
 * lowest compute-unit price, and the tips the landed bundles paid (the tip floor), as the fee
 * advice reads a block (src/advice/block-fees.ts). Read as the slots go by, because the
 * node keeps only its last 10,000 transactions (block-history.ts): at load 2 that is under a
 * minute of blocks.
 */
import { BLOCK_CONFIG, lowestLanded, slotFeesOf } from '../src/advice/block-fees';
import bs58 from 'bs58';
import { HOT_ACCOUNT } from '../src/market/market';
import type { Call } from './landing-load';

const HOT = bs58.encode(HOT_ACCOUNT);
/** The watcher looks for new slots this often (a slot is 400 ms). */
const POLL_MS = 200;
/** A block this full of its units is full: no transaction of the market's (1,935 units) fits the rest of a 200,000-unit block. */
const FULL = 0.99;
/** A slot whose block cannot be read yet is tried again this many times, then counted as unread. */
const BLOCK_ATTEMPTS = 5;

export interface SlotLanded {
  /** The lowest scheduling priority (Agave's: reward × 10⁶ / (cost + 1), the order a leader packs by) among the same transactions. */
  readonly lowestPriority: number | null;
  /**
   * The lowest price (micro-lamports per unit) of a transaction that landed successfully in the
   * slot, votes and tipped transactions left out (a bundle's transactions win the engine's
   * auction by their tip, not by their price); null when none did.
   */
  readonly lowestPrice: number | null;
  /** Transactions counted for lowestPrice. */
  readonly priced: number;
  /** Lamports each landed tipped transaction transferred to the tip accounts. */
  readonly tips: readonly number[];
  /** Of the transactions that landed successfully (votes left out), the share that wrote the market's hot account. */
  readonly hotShare: number;
}

/** What landed in a block (getBlock's result with BLOCK_CONFIG), or null when the node has none for the slot (or it does not parse). */
export function slotLandedOf(block: unknown): SlotLanded | null {
  if (block === null || typeof block !== 'object') return null;
  const fees = slotFeesOf(0, block);
  if (typeof fees === 'string') return null;
  const lowest = lowestLanded(fees.samples);
  const succeeded = fees.samples.filter((s) => !s.vote && !s.failed);
  const tips = succeeded.filter((s) => s.tip > 0).map((s) => s.tip);
  const hot = succeeded.filter((s) => s.accounts.includes(HOT)).length;
  const hotShare = succeeded.length === 0 ? 0 : hot / succeeded.length;
  return { lowestPriority: lowest?.priority ?? null, lowestPrice: lowest?.price ?? null, priced: lowest?.count ?? 0, tips, hotShare };
}

/** Reads every slot's block from `fromSlot` on, as the slots are confirmed, until stopped. */
export class BlockWatcher {
  readonly slots = new Map<number, SlotLanded>();
  /** Slots whose block could not be read in BLOCK_ATTEMPTS tries. */
  unread = 0;
  /** Each slot's units over the block's limit, as the local cluster counts them (its getSlotStats). */
  readonly fill = new Map<number, number>();
  private next: number;
  private stopped = false;
  private readonly done: Promise<void>;

  constructor(
    private readonly node: Call,
    fromSlot: number,
  ) {
    this.next = fromSlot;
    this.done = this.run();
  }

  private async run(): Promise<void> {
    const attempts = new Map<number, number>();
    while (!this.stopped) {
      const current = await this.node<number>('getSlot', [{ commitment: 'confirmed' }]).catch(() => this.next - 1);
      // The local cluster's getSlot names the slot being produced, whose block is not there yet.
      while (this.next < current && !this.stopped) {
        const slot = this.next;
        const block = await this.node('getBlock', [slot, { ...BLOCK_CONFIG, commitment: 'confirmed' }]).catch(() => undefined);
        const landed = block === undefined ? null : slotLandedOf(block);
        if (landed !== null) {
          this.slots.set(slot, landed);
          const stats = await this.node<{ units?: unknown; blockUnits?: unknown } | null>('getSlotStats', [slot]).catch(() => null);
          if (typeof stats?.units === 'number' && typeof stats.blockUnits === 'number' && stats.blockUnits > 0)
            this.fill.set(slot, stats.units / stats.blockUnits);
        } else {
          const tried = (attempts.get(slot) ?? 0) + 1;
          attempts.set(slot, tried);
          if (tried < BLOCK_ATTEMPTS) break; // try this slot again at the next poll
          this.unread += 1;
        }
        this.next += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }

  /** The tips (lamports) of the tipped transactions that landed in the last `slots` slots read. */
  recentTips(slots: number): number[] {
    const tips: number[] = [];
    for (let slot = this.next - slots; slot < this.next; slot++) tips.push(...(this.slots.get(slot)?.tips ?? []));
    return tips;
  }

  /** Of the blocks between `from` and `to` whose fill is known, the share (%) at least FULL of the limit; null when none is known. */
  fullPct(from: number, to: number): number | null {
    const fills = [...this.fill].filter(([slot]) => slot >= from && slot <= to).map(([, fill]) => fill);
    return fills.length === 0 ? null : Math.round((fills.filter((fill) => fill >= FULL).length / fills.length) * 1000) / 10;
  }

  /** Stops once every slot up to `untilSlot` has been read (or tried), or at once without it. */
  async stop(untilSlot?: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (untilSlot !== undefined && this.next <= untilSlot && Date.now() < deadline) await new Promise((r) => setTimeout(r, POLL_MS));
    this.stopped = true;
    await this.done;
  }
}
