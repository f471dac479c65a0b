/**
 * What `submissionSubscribe` reads: a key's events from the outbox, in order, from where a
 * stream starts (now, or after the last event a client saw). A key's events are kept for
 * streams while it has one open and for the retention time after (so that a client that
 * lost its connection can resume), webhook or not: each gateway learns which keys are kept
 * from the outbox every second, so a stream opened on one gateway of a cluster makes every
 * gateway keep that key's events.
 */
import type { EventOutbox, OutboxEvent } from '../stores/event-outbox';

const REFRESH_MS = 1_000;

/** Where a stream starts, or why it cannot. */
export type StreamStart = { readonly ok: true; readonly afterOrd: number } | { readonly ok: false; readonly message: string };

export class EventStreams {
  private kept = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  /** Told of a key streamed from now on by this gateway (the sink catches up with its submissions on their way). */
  onKept: (keyId: string) => Promise<void> = async () => {};

  constructor(
    private readonly outbox: EventOutbox,
    private readonly retentionMs: number,
    private readonly logError: (error: unknown, what: string) => void,
  ) {
    this.timer = setInterval(() => this.refresh(), REFRESH_MS);
    this.timer.unref();
    this.refresh();
  }

  /** The keys whose events are kept for streams. */
  keptKeys(): ReadonlySet<string> {
    return this.kept;
  }

  /** Whether the key's events are kept for streams. */
  keeps(keyId: string): boolean {
    return this.kept.has(keyId);
  }

  /** Starts a stream of the key's events: after `lastEventId` (one of its events still kept), or from now on. */
  async open(keyId: string, lastEventId: string | undefined, now: number): Promise<StreamStart> {
    const kept = this.kept.has(keyId);
    await this.keep([keyId], now);
    if (lastEventId === undefined) {
      const afterOrd = await this.outbox.lastOrd(keyId);
      // Its submissions already on their way are followed from now: their next events reach this stream.
      if (!kept) await this.onKept(keyId);
      return { ok: true, afterOrd };
    }
    const found = await this.outbox.find(lastEventId);
    if (found === null || found.keyId !== keyId)
      return {
        ok: false,
        message: `lastEventId ${lastEventId} is not an event of this key still kept (events are kept ${Math.round(this.retentionMs / 60_000)} minutes): subscribe without it, and read what was missed with getSubmissionStatuses`,
      };
    return { ok: true, afterOrd: found.ord };
  }

  /** Keeps these keys' events for the retention time from `now` (streams open on them renew it). */
  async keep(keyIds: readonly string[], now: number): Promise<void> {
    for (const keyId of keyIds) {
      this.kept.add(keyId);
      await this.outbox.stream(keyId, now + this.retentionMs);
    }
  }

  after(keyId: string, afterOrd: number, limit: number): Promise<OutboxEvent[]> {
    return this.outbox.after(keyId, afterOrd, limit);
  }

  close(): void {
    clearInterval(this.timer);
  }

  private refresh(): void {
    this.outbox.streaming(Date.now()).then(
      (keys) => {
        this.kept = new Set(keys);
      },
      (error: unknown) => this.logError(error, 'reading which keys streams keep'),
    );
  }
}
