/**
 * Which validators' TPUs received each transaction, and from which senders (the identities
 * of the clients' certificates), each in the order they first did: what a transaction's
 * exposure says once it lands through a TPU. Kept for the last `capacity` signatures.
 */
export interface TpuReceipt {
  /** Validators whose TPU received it, in order, each once. */
  readonly validators: string[];
  /** Identities (base58) that sent it, in order, each once. */
  readonly senders: string[];
}

export class TpuReceipts {
  private readonly receipts = new Map<string, TpuReceipt>();

  constructor(private readonly capacity: number) {}

  /** Records that `validator`'s TPU received `signature` from `sender`. */
  note(signature: string, validator: string, sender: string): void {
    let receipt = this.receipts.get(signature);
    if (receipt === undefined) {
      receipt = { validators: [], senders: [] };
      this.receipts.set(signature, receipt);
      if (this.receipts.size > this.capacity) this.receipts.delete(this.receipts.keys().next().value!);
    }
    if (!receipt.validators.includes(validator)) receipt.validators.push(validator);
    if (!receipt.senders.includes(sender)) receipt.senders.push(sender);
  }

  /** A copy of what is known of `signature` (empty lists: nothing). */
  of(signature: string): { validators: string[]; senders: string[] } {
    const receipt = this.receipts.get(signature);
    return { validators: [...(receipt?.validators ?? [])], senders: [...(receipt?.senders ?? [])] };
  }
}
