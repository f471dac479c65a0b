/**
 * The embedded ledger's leader schedule: a set of validator identities, each leading 4
 * consecutive slots at a time as on mainnet (NUM_CONSECUTIVE_LEADER_SLOTS), the order drawn
 * for each epoch from a generator seeded by the epoch number, every identity with the same
 * stake. The draw is a pure function of (epoch, slot group), so any slot's leader can be
 * answered without keeping a schedule in memory, and the same slot always has the same
 * leader, across restarts too.
 */
import crypto from 'node:crypto';
import bs58 from 'bs58';
import sodium from 'sodium-native';

export const SLOTS_PER_LEADER = 4;
/** Mainnet's epoch length. */
export const SLOTS_PER_EPOCH = 432_000;
/** Validators of the default schedule, when none are configured. */
export const DEFAULT_VALIDATOR_COUNT = 8;

/** `count` validator identities (real ed25519 public keys) derived from fixed seeds: the same on every machine. */
export function defaultValidatorIdentities(count = DEFAULT_VALIDATOR_COUNT): string[] {
  return Array.from({ length: count }, (_, i) => {
    const seed = crypto
      .createHash('sha256')
      .update(`slipway validator ${i + 1}`)
      .digest();
    const publicKey = Buffer.alloc(sodium.crypto_sign_PUBLICKEYBYTES);
    sodium.crypto_sign_seed_keypair(publicKey, Buffer.alloc(sodium.crypto_sign_SECRETKEYBYTES), seed);
    return bs58.encode(publicKey);
  });
}

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
    if (identities.length === 0) throw new Error('a leader schedule needs at least one validator identity');
    for (const identity of identities) {
      let bytes: Uint8Array;
      try {
        bytes = bs58.decode(identity);
      } catch {
        throw new Error(`validator identity ${JSON.stringify(identity)} is not base58`);
      }
      if (bytes.length !== 32) throw new Error(`validator identity ${identity} is not 32 bytes (a public key)`);
    }
    if (new Set(identities).size !== identities.length) throw new Error('validator identities must be distinct');
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
