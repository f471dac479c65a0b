/**
 * What the embedded ledger records of who saw each landed transaction (a test aid for
 * anti-MEV): the leader that included it, and for a transaction sent publicly through the RPC
 * node the leaders of the next slots it was forwarded to, and whether one of them sandwiches.
 */
import type { LeaderSchedule } from './leader-schedule';

/**
 * How a transaction reached the ledger. `public`: through the RPC node's `sendTransaction`,
 * which forwards it to the leaders of the next PUBLIC_FORWARD_SLOTS slots, as an RPC node
 * forwards to the upcoming leaders' TPUs; `private`: through the block engine (or in
 * process), seen only by the leader that includes it.
 */
export type SubmissionPath = 'public' | 'private';
/** Slots ahead whose leaders a publicly sent transaction reaches: the current and the next leader. */
export const PUBLIC_FORWARD_SLOTS = 8;

/** Who saw a transaction that landed, and whether one of them sandwiches. */
export interface Exposure {
  readonly slot: number;
  readonly leader: string;
  readonly path: SubmissionPath;
  /** Every leader that saw it, the landing slot's first. */
  readonly exposedTo: readonly string[];
  /** The first of them that sandwiches, or null. */
  readonly sandwichedBy: string | null;
}

export class ExposureRecorder {
  private readonly sandwichers: ReadonlySet<string>;
  private readonly exposures = new Map<string, Exposure>();

  /** Keeps the last `capacity`; each sandwiching identity must be one of the schedule's. */
  constructor(
    private readonly schedule: LeaderSchedule,
    sandwichers: readonly string[],
    private readonly capacity: number,
  ) {
    for (const identity of sandwichers) {
      if (!schedule.identities.includes(identity))
        throw new Error(`sandwiching identity ${identity} is not one of the leader schedule's validators`);
    }
    this.sandwichers = new Set(sandwichers);
  }

  /** Records who saw `signature`, landed at `slot` after arriving by `path`. */
  record(signature: string, path: SubmissionPath, slot: number): void {
    const leader = this.schedule.leaderAt(slot);
    const exposedTo = path === 'private' ? [leader] : [...new Set(this.schedule.leaders(slot, PUBLIC_FORWARD_SLOTS))];
    const sandwichedBy = exposedTo.find((identity) => this.sandwichers.has(identity)) ?? null;
    this.exposures.set(signature, { slot, leader, path, exposedTo, sandwichedBy });
    if (this.exposures.size > this.capacity) this.exposures.delete(this.exposures.keys().next().value!);
  }

  of(signature: string): Exposure | undefined {
    return this.exposures.get(signature);
  }
}
