/**
 * Delivers the outbox's events to their keys' webhooks, at least once, in order per
 * submission: each round claims the due events (of each submission only its earliest
 * undelivered one, and only for keys whose receiver is not paused), sends them at once, and
 * marks each delivered or due again after a back-off (1 s, doubling, at most 5 minutes, with
 * a fifth of jitter). A receiver whose every delivery has failed for `pauseAfterMs` is
 * paused: its events wait until its webhook is set again. Delivered events are kept for
 * `retentionMs`, then deleted.
 *
 * In a cluster, every gateway runs this loop over the shared outbox: a claim is a lease
 * (the outbox's), so each event is sent by one gateway, and again only if that one stopped
 * before it could mark it.
 */
import crypto from 'node:crypto';
import type { EventOutbox, OutboxEvent, ReceiverStatus } from '../stores/event-outbox';
import { webhookDeliveriesTotal, webhookPausedGauge, webhookPendingGauge } from '../metrics/metrics';
import type { WebhookSender, WebhookTarget } from './webhook-sender';

const ROUND_MS = 200;
const COUNT_EVERY_MS = 1_000;
const MAX_IN_FLIGHT = 64;
/** One key's deliveries at once: a key whose receiver hangs holds at most these places, not every one. */
const MAX_IN_FLIGHT_PER_KEY = 8;
const MAX_BACKOFF_MS = 5 * 60_000;

/** How a key's receiver fares, as the dashboard shows it. */
export interface WebhookState {
  readonly pending: number;
  readonly pausedAt: number | null;
  readonly failingSince: number | null;
  readonly lastError: string | null;
}

export interface WebhookDeliveryOptions {
  readonly outbox: EventOutbox;
  readonly sender: WebhookSender;
  /** The keys with a webhook, by key id (the authenticator's copy of the key store). */
  readonly webhooks: () => ReadonlyMap<string, WebhookTarget>;
  readonly pauseAfterMs: number;
  readonly timeoutMs: number;
  readonly retentionMs: number;
  /** Told of the outbox's undelivered counts per key, each second (the sink's queue limits). */
  readonly onCounted?: (pending: ReadonlyMap<string, number>) => void;
  readonly onError: (error: unknown) => void;
}

/** The wait before the next attempt after `attempts` failed ones (1 s, doubling, at most 5 minutes), with ±10 % jitter. */
export function backoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(MAX_BACKOFF_MS, 1_000 * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.9 + 0.2 * random()));
}

export class WebhookDelivery {
  private readonly owner = `gw_${crypto.randomBytes(6).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private inFlight = 0;
  private readonly inFlightByKey = new Map<string, number>();
  private readonly deliveries = new Set<Promise<void>>();
  private countedAt = 0;
  private paused = new Set<string>();
  private stopped = false;

  constructor(private readonly options: WebhookDeliveryOptions) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), ROUND_MS);
    this.timer.unref();
    this.wake();
  }

  /** Runs a round now (new events were stored), unless one is under way. */
  wake(): void {
    if (this.running !== null || this.stopped) return;
    this.running = this.round()
      .catch((error: unknown) => this.options.onError(error))
      .finally(() => {
        this.running = null;
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    // Deliveries under way finish (each within the timeout) before the outbox closes.
    await Promise.all([...this.deliveries]);
    await this.options.sender.close();
  }

  private async round(): Promise<void> {
    const now = Date.now();
    const { outbox } = this.options;
    if (now - this.countedAt >= COUNT_EVERY_MS) {
      this.countedAt = now;
      await this.count(now);
    }
    const hooks = this.options.webhooks();
    const keys = [...hooks.keys()].filter(
      (keyId) => !this.paused.has(keyId) && (this.inFlightByKey.get(keyId) ?? 0) < MAX_IN_FLIGHT_PER_KEY,
    );
    const room = MAX_IN_FLIGHT - this.inFlight;
    if (keys.length === 0 || room <= 0 || this.stopped) return;
    const events = await outbox.claim(keys, now, room, this.owner, this.options.timeoutMs + 5_000, MAX_IN_FLIGHT_PER_KEY);
    for (const event of events) {
      const delivery = this.deliver(event, hooks.get(event.keyId)!);
      this.deliveries.add(delivery);
      void delivery.finally(() => this.deliveries.delete(delivery));
    }
  }

  private async deliver(event: OutboxEvent, target: WebhookTarget): Promise<void> {
    this.inFlight += 1;
    this.inFlightByKey.set(event.keyId, (this.inFlightByKey.get(event.keyId) ?? 0) + 1);
    const { outbox } = this.options;
    try {
      const { error } = await this.options.sender.send(target, event.id, event.payload, new Date());
      const now = Date.now();
      webhookDeliveriesTotal.inc({ result: error === null ? 'delivered' : 'failed' });
      if (error === null) await outbox.delivered(event.ord, now);
      else await outbox.failed(event.ord, now + backoffMs(event.attempts + 1));
      await outbox.attempted(event.keyId, now, error);
      if (error === null && !this.stopped) this.wake(); // the submission's next event is due now
    } catch (error) {
      this.options.onError(error);
    } finally {
      this.inFlight -= 1;
      const left = (this.inFlightByKey.get(event.keyId) ?? 1) - 1;
      if (left === 0) this.inFlightByKey.delete(event.keyId);
      else this.inFlightByKey.set(event.keyId, left);
    }
  }

  /** Counts what waits, pauses receivers failing too long, and deletes what was delivered long ago. */
  private async count(now: number): Promise<void> {
    const { outbox } = this.options;
    const pending = await outbox.pending();
    this.options.onCounted?.(pending);
    webhookPendingGauge.set([...pending.values()].reduce((a, b) => a + b, 0));
    const paused = new Set<string>();
    for (const keyId of this.options.webhooks().keys()) {
      const status: ReceiverStatus | null = await outbox.receiver(keyId);
      if (status === null) continue;
      if (status.pausedAt === null && status.failingSince !== null && now - status.failingSince >= this.options.pauseAfterMs) {
        // Only if still failing that long: a webhook set again meanwhile resumed it.
        await outbox.pause(keyId, now, now - this.options.pauseAfterMs);
        if ((await outbox.receiver(keyId))?.pausedAt != null) paused.add(keyId);
      } else if (status.pausedAt !== null) paused.add(keyId);
    }
    this.paused = paused;
    webhookPausedGauge.set(paused.size);
    await outbox.prune(now - this.options.retentionMs);
  }
}
