/**
 * Sends `submissionSubscribe`'s notifications: one timer reads, for each key with a
 * submission subscription, its events in the outbox past the earliest point any of them has
 * reached (events/event-streams.ts), and hands each subscription those past its own point
 * that match its filter, in order, as `submissionNotification`s whose `result` is the event
 * itself (the webhook's JSON). Keys streamed are kept streamed while subscriptions last.
 */
import type { EventStreams } from '../events/event-streams';
import type { OutboxEvent } from '../stores/event-outbox';
import { sendMessage } from './subscription-socket';
import type { SubmissionSubscription, SubscriptionTable } from './subscription-table';

const ROUND_MS = 200;
/** Events read per key a round; a key with more goes on next round. */
const PER_ROUND = 500;
const KEEP_EVERY_MS = 60_000;

export class SubmissionStream {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private keptAt = 0;

  constructor(
    private readonly table: SubscriptionTable,
    private readonly streams: EventStreams,
    private readonly logError: (error: unknown, what: string) => void,
  ) {}

  start(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => void this.round(), ROUND_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async round(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const byKey = new Map<string, SubmissionSubscription[]>();
      for (const subscription of this.table.submissionSubscriptions()) {
        const list = byKey.get(subscription.keyId) ?? [];
        list.push(subscription);
        byKey.set(subscription.keyId, list);
      }
      if (byKey.size === 0) return this.stop();
      const now = Date.now();
      if (now - this.keptAt >= KEEP_EVERY_MS) {
        this.keptAt = now;
        await this.streams.keep([...byKey.keys()], now);
      }
      for (const [keyId, subscriptions] of byKey) {
        const from = Math.min(...subscriptions.map((s) => s.afterOrd));
        const events = await this.streams.after(keyId, from, PER_ROUND);
        for (const subscription of subscriptions) this.hand(subscription, events);
      }
    } catch (error) {
      this.logError(error, 'streaming submission events');
    } finally {
      this.running = false;
    }
  }

  private hand(subscription: SubmissionSubscription, events: readonly OutboxEvent[]): void {
    if (!this.table.has(subscription.socket)) return;
    for (const event of events) {
      if (event.ord <= subscription.afterOrd) continue;
      subscription.afterOrd = event.ord;
      const result = JSON.parse(event.payload) as { data: { signature?: string; signatures?: string[]; bundleId?: string } };
      if (!matches(subscription, result.data)) continue;
      sendMessage(subscription.socket, {
        jsonrpc: '2.0',
        method: 'submissionNotification',
        params: { result, subscription: subscription.id },
      });
    }
  }
}

function matches(subscription: SubmissionSubscription, data: { signature?: string; signatures?: string[]; bundleId?: string }): boolean {
  const { signature, bundleId } = subscription.filter;
  if (signature !== undefined) return data.signature === signature || (data.signatures?.includes(signature) ?? false);
  if (bundleId !== undefined) return data.bundleId === bundleId;
  return true;
}
