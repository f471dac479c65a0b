/**
 * What the embedded ledger remembers of what it executed, as a node's status cache does:
 * each signature's status, for `getSignatureStatuses` and to refuse a transaction already
 * processed (LiteSVM's own transaction history is off: it would refuse a transaction of a
 * bundle that was undone), and each bundle's record, for `getBundleStatuses` and resends.
 * Bounded: the oldest are forgotten.
 */
import type { TransactionErrorJson } from '../core/transaction-error';
import type { SavedLedger } from './ledger-state-file';

/** Depth (in slots) at which a status is reported `confirmed`, then `finalized`. */
export const CONFIRMED_DEPTH = 1;
export const FINALIZED_DEPTH = 32;
/** Statuses kept for `getSignatureStatuses`; older ones are forgotten (as a node's status cache does). */
export const MAX_STATUSES = 200_000;
const MAX_BUNDLES = 50_000;

export interface SignatureStatus {
  readonly slot: number;
  readonly err: TransactionErrorJson | null;
}

export interface BundleRecord {
  readonly bundleId: string;
  readonly signatures: string[];
  readonly slot: number;
  readonly landed: boolean;
  readonly err: TransactionErrorJson | null;
  /** Why a bundle did not land, in words (null when it landed). */
  readonly reason?: string | null;
}

/** The part of the saved state that is the cache's. */
export type SavedStatuses = Pick<SavedLedger, 'statuses' | 'bundles'>;

export class StatusCache {
  private readonly statuses = new Map<string, SignatureStatus>();
  private readonly bundles = new Map<string, BundleRecord>();

  constructor(saved?: SavedStatuses) {
    for (const [signature, status] of saved?.statuses ?? []) this.statuses.set(signature, status as SignatureStatus);
    for (const bundle of saved?.bundles ?? []) this.bundles.set(bundle.bundleId, bundle as BundleRecord);
  }

  /** Statuses kept. */
  get size(): number {
    return this.statuses.size;
  }

  status(signature: string): SignatureStatus | undefined {
    return this.statuses.get(signature);
  }

  has(signature: string): boolean {
    return this.statuses.has(signature);
  }

  record(signature: string, status: SignatureStatus): void {
    this.statuses.set(signature, status);
    if (this.statuses.size > MAX_STATUSES) this.statuses.delete(this.statuses.keys().next().value!);
  }

  bundle(bundleId: string): BundleRecord | undefined {
    return this.bundles.get(bundleId);
  }

  rememberBundle(record: BundleRecord): void {
    this.bundles.set(record.bundleId, record);
    if (this.bundles.size > MAX_BUNDLES) this.bundles.delete(this.bundles.keys().next().value!);
  }

  saved(): SavedStatuses {
    return { statuses: [...this.statuses], bundles: [...this.bundles.values()] };
  }
}
