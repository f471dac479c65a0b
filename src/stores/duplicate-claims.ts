/**
 * Duplicate detection across the gateways of a cluster: before a gateway forwards a
 * transaction (or a bundle), it claims it. A claim is `pending` while the submission is on
 * its way and `done` once it is journaled (then kept for `ttlMs`, about a blockhash's life);
 * a submission that did not go out gives its claim back.
 *
 * A second gateway that finds a `done` claim answers with the same signature without
 * forwarding. One that finds a `pending` claim waits for it to settle; if the first gateway
 * died meanwhile (the claim stays pending), it forwards anyway: the network executes a
 * signed transaction once whatever the number of copies, so a double send costs only the
 * bandwidth, while answering success for something never sent would lose it.
 *
 * Each gateway still filters in process first (RecentTransactions), so only transactions
 * it has not seen itself cost a round trip. A gateway alone (no Redis) has no claims: that
 * local filter is the whole of its duplicate detection.
 */
export type ClaimOutcome = 'claimed' | 'duplicate' | 'unsettled';

export interface DuplicateClaims {
  /** Claims each id: `claimed` (go ahead), `duplicate` (already submitted: answer it), `unsettled` (another gateway's claim did not settle: go ahead anyway). */
  claim(ids: readonly string[]): Promise<ClaimOutcome[]>;
  /** The claimed submissions are journaled: keep the claims for the duplicate window. */
  confirm(ids: readonly string[]): Promise<void>;
  /** The claimed submissions did not go out: give the claims back. */
  release(ids: readonly string[]): Promise<void>;
}
