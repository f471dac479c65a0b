/**
 * When the tracker's landings happened, in time and in slots: a round sees a landing up to an
 * interval late, so a landing N slots before the current slot happened about N slots' time
 * ago. Each landing's state changes get its time (`landedAt`, never before the request) and
 * its slots from receipt (null when the receipt's slot is unknown); successful ones are
 * observed in slipway_landing_seconds. Also keeps the slot watch fresh between rounds.
 */
import { landingSeconds } from '../metrics/metrics';
import type { StateChange } from '../stores/journal';
import type { Upstream } from '../upstreams/upstream';
import type { SlotWatch } from './slot-watch';

/** How stale the slot watch may get before a round asks for the slot itself (at most one getSlot per this while idle). */
const SLOT_REFRESH_MS = 2_000;

/** A landing the tracker saw (landed, or failed on chain), to be timed and journaled with its times. */
export interface Landing {
  readonly submittedAt: number;
  readonly receivedSlot: number | null;
  /** Null when the route did not say (a bundle's engine): timed as seen now, with no slots. */
  readonly slot: number | null;
  readonly route: readonly Upstream[];
  /** Observed in slipway_landing_seconds: successful landings only. */
  readonly observed: boolean;
  /** Where its state changes are in the round's changes (a bundle's: one per member). */
  readonly changes: readonly number[];
}

export class LandingTimes {
  constructor(
    private readonly reads: Pick<Upstream, 'getSlot'>,
    /** The network's slot time. */
    private readonly slotMs: number,
    /** The last slot the gateway saw: receipts read it. */
    private readonly slots?: SlotWatch,
  ) {}

  /** The slot now, as last seen (slot-watch.ts): what a submission received now is stamped with; null when unknown. */
  slotNow(): number | null {
    return this.slots?.at() ?? null;
  }

  /** Writes each landing's times into its changes (in `changes`, at the landing's indexes). */
  async time(kind: 'transaction' | 'bundle', landed: readonly Landing[], changes: StateChange[]): Promise<void> {
    if (landed.length === 0) return;
    const current = await this.reads.getSlot().catch(() => undefined);
    const now = Date.now();
    if (current !== undefined) this.slots?.note(current, now);
    for (const landing of landed) {
      const { submittedAt, receivedSlot, slot } = landing;
      const sinceLanding = current === undefined || slot === null ? 0 : Math.max(0, current - slot) * this.slotMs;
      const landedAt = Math.max(submittedAt, now - sinceLanding);
      // The receipt's slot is extrapolated and may run a slot ahead of the chain: a landing is never counted before it.
      const slotsToLand = receivedSlot === null || slot === null ? null : Math.max(0, slot - receivedSlot);
      for (const at of landing.changes) changes[at] = { ...changes[at]!, landedAt, slotsToLand };
      if (landing.observed)
        landingSeconds.observe({ kind, route: landing.route.map((u) => u.name).join('+') }, (landedAt - submittedAt) / 1000);
    }
  }

  /** Keeps the slot watch fresh while nothing else asks for the slot, so that receipts between rounds read a recent slot. */
  async refreshSlot(): Promise<void> {
    const slots = this.slots;
    if (slots === undefined || slots.ageMs() < SLOT_REFRESH_MS) return;
    const slot = await this.reads.getSlot().catch(() => undefined);
    if (slot !== undefined) slots.note(slot);
  }
}
