/**
 * The event outbox: the events of submissions (events/submission-events.ts) of keys that
 * have a webhook, kept until their receiver has taken them, so that none is lost to a
 * receiver that is down or a gateway that stops. One row an event, unique by its id (an
 * event derived twice is stored once); `ord` orders them as they were added, and delivery
 * takes, of each submission, only its earliest undelivered event (in order per submission).
 * In SQLite and in PostgreSQL alike, events become visible in the order of `ord` (one writer;
 * in PostgreSQL, additions take a lock until they commit), so a stream that reads past its
 * last `ord` misses none.
 * A claim is a lease: the gateway that claims an event delivers it, and another may claim
 * it once the lease has run out (a gateway stopped mid-delivery), so that in a cluster each
 * event goes out once, and at least once.
 */

/** A resumed receiver's events are due this long after: every gateway has read the key's new secret by then (keys reach them within a second). */
export const RESUME_AFTER_MS = 1_500;

/** An event as the outbox holds it. */
export interface OutboxEvent {
  readonly ord: number;
  readonly id: string;
  readonly keyId: string;
  readonly seq: number;
  readonly type: string;
  readonly payload: string;
  /** Failed deliveries so far. */
  readonly attempts: number;
  readonly createdAt: number;
}

export interface NewOutboxEvent {
  readonly id: string;
  readonly keyId: string;
  readonly seq: number;
  readonly type: string;
  readonly payload: string;
  /** False for a key without a webhook (kept for its streams only): stored as delivered. */
  readonly deliver: boolean;
  /**
   * Which member of its submission it is about (a bundle's events: -1) and its step's place in
   * a member's life (submission-events.ts): an event is not added once the outbox holds a later
   * step of the same member (derived again after a restart, it would arrive out of order).
   */
  readonly member?: number;
  readonly step?: number;
}

/** How a key's receiver is doing: what `keys show`, the metrics and the dashboard say. */
export interface ReceiverStatus {
  readonly keyId: string;
  /** Since when every delivery has failed (epoch ms), or null when the last one went through. */
  readonly failingSince: number | null;
  /** When deliveries were paused for failing too long (epoch ms), or null. `keys set --webhook` resumes them. */
  readonly pausedAt: number | null;
  readonly lastError: string | null;
  readonly lastDeliveredAt: number | null;
  /** Events dropped because the key's queue was full. */
  readonly dropped: number;
}

export interface EventOutbox {
  /** Adds the events whose id it does not hold yet, in the order given; returns how many were new. */
  add(events: readonly NewOutboxEvent[], now: number): Promise<number>;
  /**
   * Claims up to `limit` events due at `now` of these keys, at most `perKey` of each key (so
   * that one key's backlog cannot take every place), each the earliest undelivered one of its
   * submission and not claimed by a lease that still runs; they are `owner`'s for `leaseMs`.
   */
  claim(keyIds: readonly string[], now: number, limit: number, owner: string, leaseMs: number, perKey?: number): Promise<OutboxEvent[]>;
  /** The receiver took it. */
  delivered(ord: number, now: number): Promise<void>;
  /** The receiver did not: tried again from `nextAt`, unclaimed. */
  failed(ord: number, nextAt: number): Promise<void>;
  /** Undelivered events, per key. */
  pending(): Promise<Map<string, number>>;
  receiver(keyId: string): Promise<ReceiverStatus | null>;
  /** Records an attempt's result for the key's receiver: a delivery (error null) or a failure. */
  attempted(keyId: string, now: number, error: string | null): Promise<void>;
  /** Pauses a receiver failing since `failingBefore` or earlier (not one resumed meanwhile). */
  pause(keyId: string, now: number, failingBefore: number): Promise<void>;
  /** Gives up what waits for a key's webhook (the webhook removed): kept for its streams, never sent. */
  discard(keyId: string, now: number): Promise<void>;
  /** Resumes a paused receiver (a new URL or secret): its failures are forgotten, and its events due afresh once every gateway has the new secret. */
  resume(keyId: string, now: number): Promise<void>;
  /** Counts events dropped for a full queue. */
  dropped(keyId: string, count: number): Promise<void>;
  /** A key's events after `afterOrd`, delivered or not, in order (what `submissionSubscribe` streams). */
  after(keyId: string, afterOrd: number, limit: number): Promise<OutboxEvent[]>;
  /** The last event's `ord` of a key (0: none), where a new stream starts. */
  lastOrd(keyId: string): Promise<number>;
  /** The event with this id, if it is still kept (a stream resumed after it). */
  find(id: string): Promise<{ readonly ord: number; readonly keyId: string } | null>;
  /** Keeps a key's events until `until` (epoch ms) for its streams, webhook or not; never shortens it. */
  stream(keyId: string, until: number): Promise<void>;
  /** The keys whose events are kept for streams at `now`. */
  streaming(now: number): Promise<string[]>;
  /** Deletes delivered events older than `before` (epoch ms); returns how many. */
  prune(before: number): Promise<number>;
  close(): Promise<void>;
}
