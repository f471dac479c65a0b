/**
 * The embedded ledger's leader schedule: a set of validator identities, each leading 4
 * consecutive slots at a time as on mainnet (NUM_CONSECUTIVE_LEADER_SLOTS), the order drawn
 * for each epoch from a generator seeded by the epoch number, every identity with the same
 * stake. The draw is a pure function of (epoch, slot group), so any slot's leader can be
 * answered without keeping a schedule in memory, and the same slot always has the same
 * leader, across restarts too.
 */
import { checkValidatorIdentities, defaultValidatorIdentities, DEFAULT_VALIDATOR_COUNT } from '../core/validator-identities';

export const SLOTS_PER_LEADER = 4;
/** Mainnet's epoch length. */
export const SLOTS_PER_EPOCH = 432_000;
export { DEFAULT_VALIDATOR_COUNT };

export { defaultValidatorIdentities };

/** A 32-bit mix of two integers (murmur3's finaliser over both): the draw for one slot group. */
function mix(epoch: number, group: number): number {
  let h = Math.imul(epoch ^ 0x9e3779b9, 0x85ebca6b) ^ group;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class LeaderSchedule {
  readonly identities: readonly string[];

  constructor(identities: readonly string[] = defaultValidatorIdentities()) {
    checkValidatorIdentities(identities);
    this.identities = [...identities];
  }

  epochOf(slot: number): number {
    return Math.floor(slot / SLOTS_PER_EPOCH);
  }

  leaderAt(slot: number): string {
    const epoch = this.epochOf(slot);
    const group = Math.floor((slot % SLOTS_PER_EPOCH) / SLOTS_PER_LEADER);
    return this.identities[mix(epoch, group) % this.identities.length]!;
  }

  /** The leaders of `limit` slots from `start`, in order. */
  leaders(start: number, limit: number): string[] {
    return Array.from({ length: limit }, (_, i) => this.leaderAt(start + i));
  }

  /** The epoch of `slot` as `getLeaderSchedule` answers it: identity → slot indexes within the epoch. */
  epochSchedule(slot: number, only?: string): Record<string, number[]> {
    const first = this.epochOf(slot) * SLOTS_PER_EPOCH;
    const schedule: Record<string, number[]> = {};
    for (let index = 0; index < SLOTS_PER_EPOCH; index += SLOTS_PER_LEADER) {
      const leader = this.leaderAt(first + index);
      if (only !== undefined && leader !== only) continue;
      const slots = (schedule[leader] ??= []);
      for (let i = 0; i < SLOTS_PER_LEADER; i++) slots.push(index + i);
    }
    return schedule;
  }
}
