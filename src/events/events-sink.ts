/**
 * Turns what the journal records into events (submission-events.ts) for the keys that want
 * them, and puts them in the outbox. It follows each such submission from its record to its
 * end in a view of its own (what the journal holds of it), derives the events after every
 * write, and keeps those not derived before. Events are written to the outbox once per turn
 * of the event loop, after the journal's write has returned, never on a request's path.
 *
 * What a crash between the journal's write and the outbox's would lose is derived again:
 * every entry that start-up, recovery or a takeover reads from the journal (the duplicate
 * window's submissions, the unfinished ones, those taken over from a stopped gateway) passes
 * through `reconcile`, which adds the events the outbox does not hold yet (their ids are
 * stable, so the outbox keeps each once).
 */
import type { JournalEntry, NewSubmission, SendRecord, StateChange } from '../stores/journal';
import type { EventOutbox } from '../stores/event-outbox';
import { eventsOf, stuckEvent, type SubmissionEvent, type SubmissionView, type TransactionView } from './submission-events';

type MutableTransaction = { -readonly [K in keyof TransactionView]: TransactionView[K] } & { sends: TransactionView['sends'][number][] };
type LiveView = Omit<SubmissionView, 'transactions'> & { readonly transactions: MutableTransaction[]; readonly emitted: Set<string> };

const FINAL = new Set(['landed', 'failed', 'expired', 'rejected']);
/** A view older than this is dropped: its transactions' blockhashes expired long ago, and this gateway no longer follows it (shed, or taken over). */
const VIEW_LIFETIME_MS = 10 * 60_000;
/** A key's unfinished submissions read again this long after a catch-up, for changes written while it read. */
const CATCH_UP_AGAIN_MS = 3_000;

export interface EventsSinkOptions {
  /** Whether a key's events are wanted (it has a webhook, or a stream keeps them). */
  readonly wants: (keyId: string) => boolean;
  /** Whether a key's events go to a webhook (else they are kept for its streams only). */
  readonly delivers: (keyId: string) => boolean;
  /** Undelivered events a key may have; past it, its new events are dropped and counted. */
  readonly queueLimit: number;
  /** Told of each error writing to the outbox (the events stay queued and are written with the next turn's). */
  readonly onError: (error: unknown) => void;
  /** Told of events dropped for a full queue. */
  readonly onDropped?: (keyId: string, count: number) => void;
  /** Told of every event stored, in order (the WebSocket stream). */
  readonly onStored?: (events: readonly SubmissionEvent[]) => void;
}

export class EventsSink {
  private readonly views = new Map<number, LiveView>();
  private queued: SubmissionEvent[] = [];
  private flushing: Promise<void> | null = null;
  private scheduled = false;
  /** Undelivered events per key, as last counted by the delivery loop plus what was added since. */
  private pending = new Map<string, number>();
  /** Reads a key's unfinished submissions from the journal (given by the journal's decorator). */
  private unfinishedOf: ((keyId: string) => Promise<JournalEntry[]>) | undefined;

  constructor(
    private readonly outbox: EventOutbox,
    private readonly options: EventsSinkOptions,
  ) {}

  /** A submission just recorded under `seq`. */
  recorded(seq: number, submission: NewSubmission, now: number): void {
    if (!this.options.wants(submission.keyId)) return;
    const view: LiveView = {
      seq,
      kind: submission.kind,
      keyId: submission.keyId,
      antiMev: submission.antiMev,
      bundleId: submission.bundleId,
      routes: submission.routes,
      createdAt: now,
      emitted: new Set(),
      transactions: submission.transactions.map((tx) => ({
        signature: tx.signature,
        state: tx.state,
        slot: null,
        reason: tx.reason ?? null,
        reasonCode: tx.reasonCode ?? null,
        error: null,
        landedAt: null,
        slotsToLand: null,
        sends: tx.send === undefined ? [] : [tx.send],
        wasHeld: tx.state === 'held',
      })),
    };
    this.follow(view, now);
  }

  changed(changes: readonly StateChange[], now: number): void {
    const touched = new Set<LiveView>();
    for (const change of changes) {
      const view = this.views.get(change.seq);
      const tx = view?.transactions[change.position];
      if (view === undefined || tx === undefined) continue;
      tx.state = change.state;
      if (change.slot !== undefined && change.slot !== null) tx.slot = change.slot;
      if (change.reason !== undefined) {
        tx.reason = change.reason;
        tx.reasonCode = change.reasonCode ?? null;
      }
      if (change.error !== undefined) tx.error = change.error;
      if (change.landedAt !== undefined && change.landedAt !== null) tx.landedAt = change.landedAt;
      if (change.slotsToLand !== undefined && change.slotsToLand !== null) tx.slotsToLand = change.slotsToLand;
      if (change.state === 'held') tx.wasHeld = true;
      touched.add(view);
    }
    for (const view of touched) this.follow(view, now);
  }

  sent(records: readonly SendRecord[], now: number): void {
    const touched = new Set<LiveView>();
    for (const { seq, position, send } of records) {
      const view = this.views.get(seq);
      const tx = view?.transactions[position];
      if (view === undefined || tx === undefined) continue;
      tx.sends.push(send);
      touched.add(view);
    }
    for (const view of touched) this.follow(view, now);
  }

  /**
   * Entries read back from the journal: their events are derived again, and the unfinished ones
   * followed from here. A submission already followed takes what the entry holds beyond its view.
   */
  reconcile(entries: readonly JournalEntry[], now: number): void {
    for (const entry of entries) {
      if (!this.options.wants(entry.keyId)) continue;
      const followed = this.views.get(entry.seq);
      if (followed !== undefined) {
        entry.transactions.forEach((tx, position) => {
          const mine = followed.transactions[position];
          if (mine === undefined || FINAL.has(mine.state) || mine.state === tx.state) return;
          Object.assign(mine, { ...tx, sends: [...tx.sends], wasHeld: mine.wasHeld === true || tx.state === 'held' });
        });
        this.follow(followed, now);
        continue;
      }
      const view: LiveView = {
        ...entry,
        emitted: new Set(),
        transactions: entry.transactions.map((tx) => ({ ...tx, sends: [...tx.sends], wasHeld: tx.state === 'held' })),
      };
      this.follow(view, now);
    }
  }

  /** Where a key's unfinished submissions are read from, for `catchUp`. */
  readFrom(unfinishedOf: (keyId: string) => Promise<JournalEntry[]>): void {
    this.unfinishedOf = unfinishedOf;
  }

  /**
   * A key wanted from now on (a webhook set, a stream opened): its submissions on their way are
   * followed from here, read from the journal now and once more a moment later.
   */
  async catchUp(keyId: string): Promise<void> {
    const read = this.unfinishedOf;
    if (read === undefined) return;
    this.reconcile(await read(keyId), Date.now());
    setTimeout(() => {
      read(keyId).then(
        (entries) => this.reconcile(entries, Date.now()),
        (error: unknown) => this.options.onError(error),
      );
    }, CATCH_UP_AGAIN_MS).unref();
  }

  /** Drops views older than their lifetime: what this gateway stopped following without an end (shed, taken over). */
  sweep(now: number): void {
    for (const [seq, view] of this.views) if (now - view.createdAt > VIEW_LIFETIME_MS) this.views.delete(seq);
  }

  /** The tracker's word that a transaction has gone `slots` slots without landing while its blockhash is valid. */
  stuck(seq: number, position: number, slots: number, now: number): void {
    const view = this.views.get(seq);
    const tx = view?.transactions[position];
    if (view === undefined || tx === undefined || tx.state !== 'forwarded') return;
    const event = stuckEvent(view, position, tx.signature, slots, now);
    if (view.emitted.has(event.id)) return;
    view.emitted.add(event.id);
    this.queue([event]);
  }

  /** Whether the submission is followed (its key wants events and it has not ended). */
  follows(seq: number): boolean {
    return this.views.has(seq);
  }

  /** The delivery loop's count of undelivered events per key. */
  counted(pending: ReadonlyMap<string, number>): void {
    this.pending = new Map(pending);
  }

  /** Writes what is queued; resolves once it is in the outbox (or the write failed and it stays queued). */
  flush(): Promise<void> {
    if (this.flushing !== null) return this.flushing.then(() => (this.queued.length > 0 ? this.flush() : undefined));
    if (this.queued.length === 0) return Promise.resolve();
    const events = this.admit(this.queued);
    this.queued = [];
    this.flushing = this.outbox
      .add(
        events.map(({ id, keyId, seq, member, step, type, payload }) => ({
          id,
          keyId,
          seq,
          member,
          step,
          type,
          payload,
          deliver: this.options.delivers(keyId),
        })),
        Date.now(),
      )
      .then(
        () => this.options.onStored?.(events),
        (error: unknown) => {
          this.queued = [...events, ...this.queued];
          this.options.onError(error);
        },
      )
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  private follow(view: LiveView, now: number): void {
    const fresh = eventsOf(view, now).filter((event) => !view.emitted.has(event.id));
    for (const event of fresh) view.emitted.add(event.id);
    if (view.transactions.every((tx) => FINAL.has(tx.state))) this.views.delete(view.seq);
    else this.views.set(view.seq, view);
    if (fresh.length > 0) this.queue(fresh);
  }

  private queue(events: readonly SubmissionEvent[]): void {
    this.queued.push(...events);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** The events within their keys' queue limits; the others are dropped, and counted. */
  private admit(events: readonly SubmissionEvent[]): SubmissionEvent[] {
    const admitted: SubmissionEvent[] = [];
    const dropped = new Map<string, number>();
    for (const event of events) {
      if (!this.options.delivers(event.keyId)) {
        admitted.push(event); // kept for streams, delivered to no one: it waits in no queue
        continue;
      }
      const count = this.pending.get(event.keyId) ?? 0;
      if (count >= this.options.queueLimit) {
        dropped.set(event.keyId, (dropped.get(event.keyId) ?? 0) + 1);
        continue;
      }
      this.pending.set(event.keyId, count + 1);
      admitted.push(event);
    }
    for (const [keyId, count] of dropped) this.options.onDropped?.(keyId, count);
    return admitted;
  }
}
