/**
 * What the local cluster's TPUs do with a transaction they receive, as a validator does: its
 * signatures are verified (a bad one is dropped, as the TPU's sigverify stage drops it), the
 * receipt is recorded (which validator, from which sender: its exposure), and it is included
 * only in a slot the receiving validator leads: at once if it leads the current slot, else
 * held until its next leader window begins. A transaction whose blockhash expired
 * meanwhile is dropped there, as on a cluster; sending to the wrong validator lands late or
 * never. Held transactions are bounded per validator; past it the oldest are shed.
 */
import bs58 from 'bs58';
import { validateTransaction, type ValidatedTransaction } from '../validation/validate-transaction';
import type { LocalLedger } from './local-ledger';
import type { TpuFaults } from './tpu-faults';

/** Transactions one validator holds for its next window; past it the oldest are shed. */
export const MAX_HELD_PER_VALIDATOR = 10_000;

export interface TpuInboxCounts {
  /** Whole transactions taken from streams. */
  received: number;
  /** Dropped: did not parse, or a signature did not verify. */
  invalid: number;
  /** Dropped by the `drop` fault. */
  dropped: number;
  /** Held for a later leader window (the count of holds, not of those held now). */
  held: number;
  /** Shed from a full hold queue. */
  shed: number;
  /** Handed to the ledger: in a slot their validator leads, or under contention to that validator's scheduler. */
  executed: number;
}

export class TpuInbox {
  /** Per validator, what it holds for its next window, by signature (a resend is held once). */
  private readonly held = new Map<string, Map<string, ValidatedTransaction>>();
  readonly counts: TpuInboxCounts = { received: 0, invalid: 0, dropped: 0, held: 0, shed: 0, executed: 0 };

  /** `onError`: an execution that threw (a bug: it is reported, and the next transaction goes on). */
  constructor(
    private readonly ledger: LocalLedger,
    private readonly faults: TpuFaults,
    private readonly onError: (error: unknown) => void,
    private readonly maxHeld = MAX_HELD_PER_VALIDATOR,
  ) {
    ledger.onSlot((_slot, leader) => this.includeHeld(leader));
  }

  /** A whole transaction from a stream of `validator`'s TPU, sent by `sender` (the client certificate's key). */
  receive(validator: string, data: Buffer, sender: Buffer): void {
    this.counts.received++;
    const validated = validateTransaction(data.toString('base64'), '');
    if (!validated.ok) {
      this.counts.invalid++;
      return;
    }
    const tx = validated.value;
    this.ledger.noteTpuReceipt(tx.signature, validator, bs58.encode(sender));
    if (this.faults.drops(validator)) {
      this.counts.dropped++;
      return;
    }
    if (this.ledger.producer !== undefined) {
      // Under contention the validator's own scheduler holds it (block-producer.ts).
      this.counts.executed++;
      this.ledger.receive(tx, { path: 'tpu', validator });
      return;
    }
    if (this.ledger.schedule.leaderAt(this.ledger.currentSlot) === validator) {
      this.include(tx);
      return;
    }
    // Landed already (through another validator or path): nothing to hold.
    if (this.ledger.getSignatureStatus(tx.signature) !== undefined) return;
    let queue = this.held.get(validator);
    if (queue === undefined) this.held.set(validator, (queue = new Map()));
    if (queue.has(tx.signature)) return;
    queue.set(tx.signature, tx);
    this.counts.held++;
    if (queue.size > this.maxHeld) {
      queue.delete(queue.keys().next().value!);
      this.counts.shed++;
    }
  }

  /** Transactions `validator` holds now. */
  heldBy(validator: string): number {
    return this.held.get(validator)?.size ?? 0;
  }

  /** A slot `leader` leads has begun: it includes what it holds. */
  private includeHeld(leader: string): void {
    const queue = this.held.get(leader);
    if (queue === undefined) return;
    this.held.delete(leader);
    for (const tx of queue.values()) this.include(tx);
  }

  private include(tx: ValidatedTransaction): void {
    this.counts.executed++;
    try {
      this.ledger.execute(tx, { path: 'tpu' });
    } catch (error) {
      this.onError(error);
    }
  }
}
