/**
 * What happened to a submission, told to its key's owner: the events its webhook receives
 * and `submissionSubscribe` streams, one per state change that matters. They are derived
 * from the journal's view of the submission (what it holds now), never kept apart from it:
 * the same view gives the same events, with the same ids, whichever gateway derives them and
 * however often, so that a receiver deduplicates by id and a gateway that restarts (or takes
 * a submission over) derives again what a crash may have kept it from storing.
 *
 * A transaction (alone, or a member of a batch) goes through:
 *
 *   [held → released] | forwarded, then [stuck], then landed | failed | expired | rejected
 *
 * A bundle's members change state together, so a bundle has one event per change, for all
 * of its members (`bundle.*`). `stuck` is not a state of the journal: the tracker says it
 * (events-sink.ts), once a transaction has gone a number of slots without landing while its
 * blockhash is still valid.
 */
import crypto from 'node:crypto';
import type { OutcomeReason } from '../core/outcome-reasons';
import type { SendEvidence, SubmissionKind, TransactionState } from '../stores/journal';

export const EVENT_STEPS = ['held', 'released', 'forwarded', 'stuck', 'landed', 'failed', 'expired', 'rejected'] as const;
export type EventStep = (typeof EVENT_STEPS)[number];
export type EventType = `${'transaction' | 'bundle'}.${EventStep}`;

/** What the events are derived from: a journal entry holds all of it (JournalEntry is one). */
export interface SubmissionView {
  readonly seq: number;
  readonly kind: SubmissionKind;
  readonly keyId: string;
  readonly antiMev: boolean;
  readonly bundleId: string | null;
  readonly routes: readonly string[];
  readonly createdAt: number;
  readonly transactions: readonly TransactionView[];
}

export interface TransactionView {
  readonly signature: string;
  readonly state: TransactionState;
  readonly slot: number | null;
  readonly reason: string | null;
  readonly reasonCode: OutcomeReason | null;
  readonly error: unknown;
  readonly landedAt: number | null;
  readonly slotsToLand: number | null;
  readonly sends: readonly SendEvidence[];
  /** Seen held by the gateway deriving (a release's state change can arrive before its send's evidence). */
  readonly wasHeld?: boolean;
}

/** One event, as stored in the outbox and sent: `payload` is the JSON body a receiver gets. */
export interface SubmissionEvent {
  /** Stable: the same change of the same submission has this id wherever and whenever it is derived. */
  readonly id: string;
  readonly keyId: string;
  /** The submission's sequence number in the journal: events are delivered in order per submission. */
  readonly seq: number;
  /** The member it is about (its position; a bundle's: -1) and its step's place in EVENT_STEPS, which orders a member's events. */
  readonly member: number;
  readonly step: number;
  readonly type: EventType;
  /** Its JSON: `{ id, type, timestamp, data }`, the Standard Webhooks payload with the id repeated. */
  readonly payload: string;
}

/** What one event says, beside its type. */
type EventData = Record<string, unknown>;

/**
 * Every event the submission has had so far, in the order they happened (per transaction, in
 * the order above; transactions by position). `now` is the time given to events whose time the
 * view does not hold.
 */
export function eventsOf(view: SubmissionView, now: number): SubmissionEvent[] {
  if (view.kind === 'bundle') {
    const first = view.transactions[0];
    if (first === undefined) return [];
    const common = { bundleId: view.bundleId, signatures: view.transactions.map((tx) => tx.signature) };
    return stepsOf(view, first).map(([step, data]) => event(view, 'bundle', 'bundle', step, { ...common, ...data }, first, now));
  }
  return view.transactions.flatMap((tx, position) =>
    stepsOf(view, tx).map(([step, data]) =>
      event(view, 'transaction', position, step, { signature: tx.signature, submission: { kind: view.kind, position }, ...data }, tx, now),
    ),
  );
}

/** The `stuck` event of one transaction (or of a bundle, position 'bundle'): said by the tracker, not derived. */
export function stuckEvent(
  view: Pick<SubmissionView, 'seq' | 'keyId' | 'kind' | 'bundleId'>,
  position: number,
  signature: string,
  slots: number,
  now: number,
): SubmissionEvent {
  const data = { signature, submission: { kind: view.kind, position }, slotsSinceReceipt: slots };
  return build(view, idOf(view.seq, position, signature, 'stuck'), position, 'stuck', 'transaction.stuck', data, now);
}

function event(
  view: SubmissionView,
  prefix: 'transaction' | 'bundle',
  position: number | 'bundle',
  step: EventStep,
  data: EventData,
  tx: TransactionView,
  now: number,
): SubmissionEvent {
  const at = step === 'landed' || step === 'failed' ? (tx.landedAt ?? now) : now;
  return build(
    view,
    idOf(view.seq, position, tx.signature, step),
    position === 'bundle' ? -1 : position,
    step,
    `${prefix}.${step}`,
    data,
    at,
  );
}

function build(
  view: Pick<SubmissionView, 'seq' | 'keyId'>,
  id: string,
  member: number,
  step: EventStep,
  type: EventType,
  data: EventData,
  at: number,
): SubmissionEvent {
  const payload = JSON.stringify({ id, type, timestamp: new Date(at).toISOString(), data });
  return { id, keyId: view.keyId, seq: view.seq, member, step: EVENT_STEPS.indexOf(step), type, payload };
}

/** `evt_` and 32 hex digits of a hash of what makes it unique: the submission, the member (its signature too, so that ids never repeat across journals) and the step. */
function idOf(seq: number, position: number | 'bundle', signature: string, step: EventStep): string {
  return `evt_${crypto.createHash('sha256').update(`${seq}:${position}:${signature}:${step}`).digest('hex').slice(0, 32)}`;
}

/** The steps one transaction (or a bundle, by its first member) has been through, each with what it says. */
function stepsOf(view: SubmissionView, tx: TransactionView): [EventStep, EventData][] {
  const steps: [EventStep, EventData][] = [];
  const firstSend = tx.sends[0];
  const held =
    tx.wasHeld === true ||
    tx.state === 'held' ||
    (firstSend !== undefined && firstSend.heldReason !== null && firstSend.attempt === 0) ||
    tx.reasonCode === 'held_by_policy';
  if (held) {
    steps.push(['held', { reason: firstSend?.heldReason ?? (tx.state === 'held' ? tx.reason : null) }]);
    // A release is known by its send's evidence; until it is journaled, the release waits.
    if (firstSend !== undefined) steps.push(['released', { routes: firstSend.route, slot: firstSend.slot, heldMs: firstSend.heldMs }]);
  } else if (wentOut(tx)) {
    steps.push(['forwarded', { routes: view.routes }]);
  }
  switch (tx.state) {
    case 'landed':
      steps.push(['landed', { slot: tx.slot, msToLand: msToLand(view, tx), slotsToLand: tx.slotsToLand }]);
      break;
    case 'failed':
      steps.push([
        'failed',
        {
          slot: tx.slot,
          msToLand: msToLand(view, tx),
          reasonCode: tx.reasonCode ?? 'failed_on_chain',
          reason: tx.reason,
          error: tx.error ?? null,
        },
      ]);
      break;
    case 'expired':
    case 'rejected':
      steps.push([tx.state, { reasonCode: tx.reasonCode, reason: tx.reason }]);
      break;
    default:
  }
  return steps;
}

/**
 * Whether the route took it: forwarded and what follows, but not a rejection, nor an expiry
 * the network answered on arrival (route-send.ts words it "the network answered").
 */
function wentOut(tx: TransactionView): boolean {
  if (tx.state === 'rejected' || tx.state === 'held') return false;
  if (tx.state === 'expired') return !(tx.reason ?? '').includes('the network answered');
  return true;
}

function msToLand(view: SubmissionView, tx: TransactionView): number | null {
  return tx.landedAt === null ? null : Math.max(0, tx.landedAt - view.createdAt);
}
