/**
 * The embedded ledger's slots and the blockhashes they produced: the last MAX_PROCESSING_AGE
 * of them are valid, as on a cluster. LiteSVM accepts only its latest blockhash (its own
 * check is off), so the window is kept here; and LiteSVM derives each blockhash from the
 * previous one with no way to set it, so the window counts how many it has derived, for a
 * restored ledger to continue the same chain rather than hand out blockhashes used before.
 */
import type { LiteSvm } from 'litesvm/dist/internal';
import type { SavedLedger } from './ledger-state-file';

/** Solana's MAX_PROCESSING_AGE: a blockhash stays valid for this many blocks. */
export const MAX_PROCESSING_AGE = 150;
/** Entries of the SlotHashes sysvar, as on a cluster. */
const MAX_SLOT_HASHES = 512;

/** The part of the saved state that is the window's. */
export type SavedWindow = Pick<SavedLedger, 'slot' | 'blockhashCount' | 'blockhashes' | 'slotHashes'>;

export class BlockhashWindow {
  private current: number;
  /** Recent blockhashes (base58) → the slot that produced them, oldest first. */
  private readonly blockhashes = new Map<string, number>();
  private latestHash: string;
  /** Blockhashes LiteSVM has derived since genesis. */
  private blockhashCount = 0;

  /** LiteSVM's own first slot and blockhash, or the saved window, LiteSVM brought back to it. */
  constructor(
    private readonly svm: LiteSvm,
    saved?: SavedWindow,
  ) {
    if (saved === undefined) {
      this.current = Number(svm.getClock().slot);
      this.latestHash = svm.latestBlockhash();
      this.blockhashes.set(this.latestHash, this.current);
      return;
    }
    this.current = saved.slot;
    svm.warpToSlot(BigInt(saved.slot));
    for (let i = 0; i < saved.blockhashCount; i++) svm.expireBlockhash();
    this.blockhashCount = saved.blockhashCount;
    svm.setSlotHashes(saved.slotHashes.map(({ slot, hash }) => ({ slot: BigInt(slot), hash })));
    for (const [hash, slot] of saved.blockhashes) this.blockhashes.set(hash, slot);
    this.latestHash = svm.latestBlockhash();
  }

  get slot(): number {
    return this.current;
  }

  get latest(): string {
    return this.latestHash;
  }

  has(blockhash: string): boolean {
    return this.blockhashes.has(blockhash);
  }

  /** Moves to the next slot, which gets a new blockhash (returned); the oldest falls out of the window. */
  advance(): string {
    this.current += 1;
    this.svm.warpToSlot(BigInt(this.current));
    this.svm.expireBlockhash();
    this.blockhashCount += 1;
    const blockhash = this.svm.latestBlockhash();
    this.latestHash = blockhash;
    this.blockhashes.set(blockhash, this.current);
    // The SlotHashes sysvar lists recent slots, newest first; programs read it (address
    // lookup tables are created against a recent slot), and warping does not update it.
    const slotHashes = this.svm.getSlotHashes().map(({ slot, hash }) => ({ slot, hash }));
    slotHashes.unshift({ slot: BigInt(this.current), hash: blockhash });
    this.svm.setSlotHashes(slotHashes.slice(0, MAX_SLOT_HASHES));
    for (const [hash, slot] of this.blockhashes) {
      if (this.current - slot <= MAX_PROCESSING_AGE) break;
      this.blockhashes.delete(hash);
    }
    return blockhash;
  }

  /**
   * Moves the slot number on by `slots` without new blockhashes: for a stretch so long that
   * every blockhash of before would have expired anyway.
   */
  skip(slots: number): void {
    this.current += slots;
    this.svm.warpToSlot(BigInt(this.current));
  }

  saved(): SavedWindow {
    return {
      slot: this.current,
      blockhashCount: this.blockhashCount,
      blockhashes: [...this.blockhashes],
      slotHashes: this.svm.getSlotHashes().map(({ slot, hash }) => ({ slot: slot.toString(), hash })),
    };
  }
}
