/**
 * The last slot the gateway saw, and when: a receipt's slot is read from here, so that a
 * request never waits for a `getSlot` of its own. Fed by whatever already asks for the slot
 * (the router's `getSlot`, the tracker's rounds, the embedded ledger's slot clock); between two sightings the slot is
 * extrapolated at the network's slot time, and after too long without one it is unknown.
 */

/** Past this many slots of extrapolation the estimate is no longer trusted (a minute on mainnet). */
const MAX_EXTRAPOLATED_SLOTS = 150;

export class SlotWatch {
  private slot: number | null = null;
  private seenAt = 0;

  constructor(private readonly slotMs: number) {}

  /** A slot seen at `at` (epoch ms): kept unless it is behind the last one seen (nodes answer from slightly different slots). */
  note(slot: number, at = Date.now()): void {
    if (this.slot !== null && slot < this.slot) return;
    this.slot = slot;
    this.seenAt = at;
  }

  /** The slot at `now`: the last one seen, plus the slots since, or null when none was seen lately. */
  at(now = Date.now()): number | null {
    if (this.slot === null) return null;
    const elapsed = Math.max(0, Math.floor((now - this.seenAt) / this.slotMs));
    return elapsed > MAX_EXTRAPOLATED_SLOTS ? null : this.slot + elapsed;
  }

  /** How long since a slot was last seen (ms); Infinity when none was. */
  ageMs(now = Date.now()): number {
    return this.slot === null ? Infinity : now - this.seenAt;
  }
}
