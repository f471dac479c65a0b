/**
 * Protected transactions that may not be sent yet: journaled as `held` before the client
 * was answered, they wait here until a safe window opens, then go to their (protected)
 * route and on to the tracker. One timer for all of them: while anything is held, the
 * window is looked at every `checkMs` (a few times per slot), and one decision releases
 * everything held, since every held transaction waits for the same thing.
 *
 * While held, the journal keeps the reason up to date (at most once per expiry check), so
 * that a client asking why sees the current one.
 *
 * A held transaction whose blockhash expires can never land: it is journaled `expired`
 * with the reason it was held, never sent. One with a durable nonce has no blockhash to
 * expire and is given up after `maxHoldMs`.
 */
import bs58 from 'bs58';
import { protectedExpiredWhileHeldTotal, protectedHoldSeconds, protectedReleasedTotal } from '../metrics/metrics';
import { sendToRoute, stateAfter } from './route-send';
import type { LandingTracker } from './landing-tracker';
import { RoundLoop } from '../runtime/round-loop';
import type { Journal, SendRecord, StateChange } from '../stores/journal';
import type { SendOptions, Upstream } from '../upstreams/upstream';
import type { ValidatedTransaction } from '../validation/validate-transaction';
import { windowOptions, type SafeWindow, type SendDecision } from '../protection/safe-window';

export interface HeldTransaction {
  readonly seq: number;
  readonly position: number;
  readonly tx: ValidatedTransaction;
  readonly upstreams: readonly Upstream[];
  readonly options: SendOptions;
  /** When it was received (epoch ms). */
  readonly heldSince: number;
  /** The slot seen when it was received (for the slots to land), when known. */
  readonly receivedSlot?: number | null;
  /** Why it is held: the latest reason. */
  reason: string;
  /** The reason the journal holds, when it differs from `reason`. */
  journaledReason?: string;
}

export interface HoldQueueOptions {
  readonly window: SafeWindow;
  readonly journal: Journal;
  readonly tracker: LandingTracker;
  /** Where blockhash validity is asked. */
  readonly reads: Upstream;
  /** How often the window is looked at while something is held. */
  readonly checkMs: number;
  /** How often held transactions' blockhashes are checked. */
  readonly expiryCheckMs: number;
  /** How long a durable-nonce transaction may be held. */
  readonly maxHoldMs: number;
  readonly logError: (error: unknown, what: string) => void;
}

export class HoldQueue {
  private readonly held = new Map<string, HeldTransaction>();
  private readonly loop: RoundLoop;
  private lastExpiryCheck = 0;

  constructor(private readonly options: HoldQueueOptions) {
    this.loop = new RoundLoop(async () => {
      if (this.held.size === 0) return;
      await this.check().catch((error: unknown) => options.logError(error, 'protected hold round'));
    }, options.checkMs);
  }

  /** Holds transactions already journaled as `held`. */
  hold(items: readonly HeldTransaction[]): void {
    for (const item of items) this.held.set(item.tx.signature, item);
  }

  get size(): number {
    return this.held.size;
  }

  /** The sequence numbers of the submissions held. */
  following(): number[] {
    return [...new Set([...this.held.values()].map((item) => item.seq))];
  }

  /** Stops holding these submissions (another gateway holds them now). */
  drop(seqs: ReadonlySet<number>): void {
    for (const [key, item] of this.held) if (seqs.has(item.seq)) this.held.delete(key);
  }

  /** The lowest journal sequence number still held (Infinity when none): those have not reached the ledger. */
  oldestSeq(): number {
    let oldest = Infinity;
    for (const item of this.held.values()) oldest = Math.min(oldest, item.seq);
    return oldest;
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One look at the window now. */
  runRound(): Promise<void> {
    return this.loop.run();
  }

  private async check(): Promise<void> {
    const decision = this.options.window.decide();
    if (decision.send) return this.release(decision);
    for (const item of this.held.values()) {
      item.journaledReason ??= item.reason;
      item.reason = decision.reason;
    }
    if (Date.now() - this.lastExpiryCheck >= this.options.expiryCheckMs) await this.expire();
  }

  private async release(decision: SendDecision): Promise<void> {
    const { journal, tracker, window } = this.options;
    const items = [...this.held.values()];
    const outcomes = await Promise.all(items.map((item) => sendToRoute(item.upstreams, item.tx, windowOptions(item.options, decision))));
    const changes: StateChange[] = [];
    const sends: SendRecord[] = [];
    const now = Date.now();
    items.forEach((item, i) => {
      const outcome = outcomes[i]!;
      // Sent: the reason it was held moves to the send's evidence.
      changes.push({ seq: item.seq, position: item.position, reasonCode: null, reason: null, ...stateAfter(outcome) });
      const heldMs = now - item.heldSince;
      if (outcome.accepted > 0) {
        sends.push({
          seq: item.seq,
          position: item.position,
          send: window.evidence(
            decision,
            item.upstreams.map((u) => u.name),
            0,
            heldMs,
            item.reason,
            outcome.contacted,
          ),
        });
      }
      protectedHoldSeconds.observe(heldMs / 1000);
    });
    await Promise.all([journal.update(changes), journal.recordSends(sends)]);
    items.forEach((item, i) => {
      this.held.delete(item.tx.signature);
      if (changes[i]!.state === 'forwarded' && item.upstreams.some((u) => u.tracked)) {
        tracker.track({
          seq: item.seq,
          position: item.position,
          tx: item.tx,
          upstreams: item.upstreams,
          attempts: 0,
          submittedAt: item.heldSince,
          receivedSlot: item.receivedSlot ?? null,
          protected: true,
        });
      }
    });
    protectedReleasedTotal.inc(items.length);
  }

  /** Gives up held transactions that can no longer land: an expired blockhash, or a durable nonce held too long. */
  private async expire(): Promise<void> {
    this.lastExpiryCheck = Date.now();
    const { reads, journal, maxHoldMs, logError } = this.options;
    const validity = new Map<string, boolean>();
    const expired: { item: HeldTransaction; why: string }[] = [];
    for (const item of this.held.values()) {
      if (item.tx.usesDurableNonce) {
        if (Date.now() - item.heldSince > maxHoldMs) expired.push({ item, why: `not sent within ${Math.round(maxHoldMs / 1000)} s` });
        continue;
      }
      const blockhash = bs58.encode(item.tx.wire.recentBlockhash);
      if (!validity.has(blockhash)) {
        try {
          validity.set(blockhash, await reads.isBlockhashValid(blockhash));
        } catch (error) {
          logError(error, 'isBlockhashValid');
          validity.set(blockhash, true); // not known to be expired: keep holding
        }
      }
      if (validity.get(blockhash) === false) expired.push({ item, why: 'its blockhash expired before a safe window opened' });
    }
    const gone = new Set(expired.map(({ item }) => item));
    const stillHeld = [...this.held.values()].filter(
      (item) => !gone.has(item) && item.journaledReason !== undefined && item.journaledReason !== item.reason,
    );
    const now = Date.now();
    await journal.update([
      ...expired.map(({ item, why }) => ({
        seq: item.seq,
        position: item.position,
        state: 'expired' as const,
        reasonCode: 'held_by_policy' as const,
        reason: `held by anti-MEV protection and never sent (${item.reason}); ${why}`,
      })),
      ...stillHeld.map((item) => ({
        seq: item.seq,
        position: item.position,
        state: 'held' as const,
        reasonCode: 'held_by_policy' as const,
        reason: item.reason,
      })),
    ]);
    for (const item of stillHeld) item.journaledReason = item.reason;
    for (const { item } of expired) {
      this.held.delete(item.tx.signature);
      protectedHoldSeconds.observe((now - item.heldSince) / 1000);
    }
    protectedExpiredWhileHeldTotal.inc(expired.length);
  }
}
