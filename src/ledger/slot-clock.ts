/**
 * What moves the embedded ledger's slots on: a timer, one slot per `slotMs`, and after a
 * restart the slots that would have passed since the state was saved, for the chain went on
 * meanwhile. Apart from the blockhash window, which knows slots but not time.
 */

/** Slots caught up one by one after a restart: well past MAX_PROCESSING_AGE, so every blockhash handed out before the restart has its true age. */
const MAX_CATCH_UP_SLOTS = 1_000;

export class SlotClock {
  private timer: NodeJS.Timeout | undefined;

  /**
   * `advance` ends the current slot; `skip` moves the slot number on without blockhashes.
   * `savedAt`: when the state the ledger was restored from was saved, if it was.
   */
  constructor(
    private readonly slotMs: number,
    private savedAt: number | undefined,
    private readonly advance: () => void,
    private readonly skip: (slots: number) => void,
  ) {}

  /**
   * Starts producing slots; after a restart, first those that would have passed since the
   * state was saved. Blockhashes are derived one from the next, so the ones handed out
   * between the save and a crash come round again, with the age they would have had (a
   * transaction signed with one, held or in a client's hands, is still valid if it would
   * have been).
   */
  start(): void {
    if (this.timer !== undefined) return;
    if (this.savedAt !== undefined) {
      const missed = Math.max(0, Math.floor((Date.now() - this.savedAt) / this.slotMs));
      // Past MAX_CATCH_UP_SLOTS every blockhash of before has expired: the slot number alone moves on.
      for (let i = 0; i < Math.min(missed, MAX_CATCH_UP_SLOTS); i++) this.advance();
      if (missed > MAX_CATCH_UP_SLOTS) this.skip(missed - MAX_CATCH_UP_SLOTS);
      this.savedAt = undefined;
    }
    this.timer = setInterval(() => this.advance(), this.slotMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}
