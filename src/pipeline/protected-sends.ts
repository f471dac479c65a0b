/**
 * Anti-MEV protection on the way out: a protected transaction or batch goes to its route
 * only in a safe window (protection/safe-window.ts); otherwise it is journaled `held` and
 * handed to the hold queue, which sends it when a window opens. A send made at once carries
 * the evidence of the window it went in.
 */
import { protectedHeldTotal } from '../metrics/metrics';
import type { SafeWindow, SendDecision } from '../protection/safe-window';
import type { SendEvidence } from '../stores/journal';
import type { SendOptions, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import type { HoldQueue } from './hold-queue';
import type { JournalState, RouteOutcome } from './route-send';
import type { JournalRecorder } from './journal-recorder';
import type { SubmissionContext } from './submission-shapes';

export class ProtectedSends {
  constructor(
    private readonly protection: { readonly window: SafeWindow; readonly holds: HoldQueue },
    private readonly recorder: JournalRecorder,
  ) {}

  /** A protected transaction's state with the evidence of its first send, made at once (not held), when it was sent. */
  withEvidence(
    state: JournalState,
    outcome: RouteOutcome,
    route: readonly Upstream[],
    decision: SendDecision | undefined,
  ): JournalState & { send?: SendEvidence } {
    if (decision === undefined || outcome.accepted === 0) return state;
    return {
      ...state,
      send: this.protection.window.evidence(
        decision,
        route.map((u) => u.name),
        0,
        0,
        null,
        outcome.contacted,
      ),
    };
  }

  /**
   * When no safe window is open, journals the transactions as `held` (with the reason) and
   * hands them to the hold queue. Otherwise returns the decision to send now, for the evidence.
   */
  async holdUnlessSafe(
    kind: 'transaction' | 'batch',
    context: SubmissionContext,
    route: readonly Upstream[],
    txs: readonly ValidatedTransaction[],
    options: SendOptions,
    receivedAt: number,
  ): Promise<SendDecision | 'held'> {
    const decision = this.protection.window.decide();
    if (decision.send) return decision;
    const seq = await this.recorder.record(
      kind,
      context,
      route,
      txs,
      txs.map(() => ({ state: 'held' as const, reasonCode: 'held_by_policy' as const, reason: decision.reason })),
    );
    this.protection.holds.hold(
      txs.map((tx, position) => ({
        seq,
        position,
        tx,
        upstreams: route,
        options,
        heldSince: receivedAt,
        receivedSlot: context.receivedSlot ?? null,
        reason: decision.reason,
      })),
    );
    protectedHeldTotal.inc(txs.length);
    return 'held';
  }
}
