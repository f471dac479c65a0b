/**
 * What the embedded ledger records of who saw each landed transaction (a test aid for
 * anti-MEV): the leader that included it, and for a transaction sent publicly through the RPC
 * node the leaders of the next slots it was forwarded to, for one sent to validators' TPUs
 * every validator that received it and the identities that sent it, and whether one of the
 * validators that saw it sandwiches.
 */
import type { LeaderSchedule } from './leader-schedule';
import { TpuReceipts } from './tpu-receipts';

/**
 * How a transaction reached the ledger. `public`: through the RPC node's `sendTransaction`,
 * which forwards it to the leaders of the next PUBLIC_FORWARD_SLOTS slots, as an RPC node
 * forwards to the upcoming leaders' TPUs; `private`: through the block engine (or in
 * process), seen only by the leader that includes it; `tpu`: sent to validators' TPUs over
 * QUIC, seen by each validator whose TPU received it.
 */
export type SubmissionPath = 'public' | 'private' | 'tpu';
/** Slots ahead whose leaders a publicly sent transaction reaches: the current and the next leader. */
export const PUBLIC_FORWARD_SLOTS = 8;

/** Who saw a transaction that landed, and whether one of them sandwiches. */
export interface Exposure {
  readonly slot: number;
  readonly leader: string;
  readonly path: SubmissionPath;
  /**
   * Every validator that saw it: by the path it landed by (the landing slot's leader first),
   * then every other validator whose TPU received it; for `tpu`, those validators in the
   * order their TPUs received it.
   */
  readonly exposedTo: readonly string[];
  /** The first of them that sandwiches, or null. */
  readonly sandwichedBy: string | null;
  /** The identities (base58, from their certificates) that sent it to a TPU, in order; empty if none did. */
  readonly tpuSenders: readonly string[];
}

type Landing = Pick<Exposure, 'slot' | 'leader' | 'path'> & { readonly seenOnPath: readonly string[] };

export class ExposureRecorder {
  private readonly sandwichers: ReadonlySet<string>;
  private readonly exposures = new Map<string, Landing>();
  /** Who received what through the TPUs, landed or not yet. */
  private readonly receipts: TpuReceipts;

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
    this.receipts = new TpuReceipts(capacity);
  }

  /** Records that `validator`'s TPU received `signature` from `sender` (base58 identities). */
  noteTpuReceipt(signature: string, validator: string, sender: string): void {
    this.receipts.note(signature, validator, sender);
  }

  /** Records who saw `signature`, landed at `slot` after arriving by `path`. */
  record(signature: string, path: SubmissionPath, slot: number): void {
    const leader = this.schedule.leaderAt(slot);
    const seenOnPath =
      path === 'tpu' ? [] : path === 'private' ? [leader] : [...new Set(this.schedule.leaders(slot, PUBLIC_FORWARD_SLOTS))];
    this.exposures.set(signature, { slot, leader, path, seenOnPath });
    if (this.exposures.size > this.capacity) this.exposures.delete(this.exposures.keys().next().value!);
  }

  /** Who saw `signature`, as of now: a TPU that receives it after it landed counts too. */
  of(signature: string): Exposure | undefined {
    const landing = this.exposures.get(signature);
    if (landing === undefined) return undefined;
    const { slot, leader, path, seenOnPath } = landing;
    const received = this.receipts.of(signature);
    const exposedTo = [...new Set([...seenOnPath, ...received.validators])];
    const sandwichedBy = exposedTo.find((identity) => this.sandwichers.has(identity)) ?? null;
    return { slot, leader, path, exposedTo, sandwichedBy, tpuSenders: received.senders };
  }
}
