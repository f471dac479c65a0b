/**
 * The events side of a gateway, made from the settings: the outbox (SQLite or PostgreSQL,
 * like every store), the sink that fills it from the journal, and the delivery loop that
 * empties it into the keys' webhooks.
 */
import type { Authenticator } from '../auth/authenticator';
import type { SlipwayConfig } from '../config/config';
import { webhookEventsDroppedTotal } from '../metrics/metrics';
import { openStore } from '../stores/database/open-store';
import { EVENT_OUTBOX } from '../stores/store-adapters';
import type { Journal } from '../stores/journal';
import { eventingJournal } from './eventing-journal';
import { EventsSink } from './events-sink';
import { EventStreams } from './event-streams';
import { WebhookDelivery, type WebhookState } from './webhook-delivery';
import { createWebhookSender } from './webhook-sender';

/** Delivered events are kept this long (a receiver's late duplicate check, a stream's replay), then deleted. */
const RETENTION_MS = 60 * 60_000;
/** How often the keys wanted are compared with those wanted before (a webhook set, a stream opened elsewhere). */
const WANTED_EVERY_MS = 1_000;
const SWEEP_EVERY_MS = 30_000;

export interface GatewayEvents {
  readonly sink: EventsSink;
  /** What `submissionSubscribe` reads. */
  readonly streams: EventStreams;
  /** How each key's receiver fares, for the dashboard. */
  webhookStates(): Promise<Map<string, WebhookState>>;
  /** The journal with its writes turned into events. */
  wrap(journal: Journal): Journal;
  start(): void;
  stop(): Promise<void>;
}

export async function openEvents(
  config: SlipwayConfig,
  keys: Pick<Authenticator, 'webhooks'>,
  logError: (error: unknown, what: string) => void,
): Promise<GatewayEvents> {
  const webhooks = () => keys.webhooks();
  const outbox = await openStore(config, EVENT_OUTBOX);
  const streams = new EventStreams(outbox, RETENTION_MS, logError);
  // The sink wakes the delivery loop, which is made next: a holder breaks the circle.
  const wake = { delivery: undefined as WebhookDelivery | undefined };
  const sink = new EventsSink(outbox, {
    wants: (keyId) => webhooks().has(keyId) || streams.keeps(keyId),
    delivers: (keyId) => webhooks().has(keyId),
    queueLimit: config.webhookQueueLimit,
    onError: (error) => logError(error, 'writing submission events'),
    onDropped: (keyId, count) => {
      webhookEventsDroppedTotal.inc(count);
      outbox.dropped(keyId, count).catch((error: unknown) => logError(error, 'counting dropped events'));
    },
    onStored: () => wake.delivery?.wake(),
  });
  const delivery = new WebhookDelivery({
    outbox,
    sender: createWebhookSender({ allowPrivate: config.webhookAllowPrivate, timeoutMs: config.webhookTimeoutMs }),
    webhooks,
    pauseAfterMs: config.webhookPauseAfterSeconds * 1000,
    timeoutMs: config.webhookTimeoutMs,
    retentionMs: RETENTION_MS,
    onCounted: (pending) => sink.counted(pending),
    onError: (error) => logError(error, 'delivering webhooks'),
  });
  wake.delivery = delivery;
  streams.onKept = (keyId) => sink.catchUp(keyId);
  // A key newly wanted (its webhook set, or a stream opened on another gateway) has its submissions on their way followed.
  const wantedNow = () => new Set([...webhooks().keys(), ...streams.keptKeys()]);
  let wanted = new Set<string>();
  let sweptAt = Date.now();
  const watch = setInterval(() => {
    const current = wantedNow();
    for (const keyId of current)
      if (!wanted.has(keyId)) sink.catchUp(keyId).catch((error: unknown) => logError(error, 'following a key newly wanted'));
    wanted = current;
    if (Date.now() - sweptAt >= SWEEP_EVERY_MS) {
      sweptAt = Date.now();
      sink.sweep(sweptAt);
    }
  }, WANTED_EVERY_MS);
  watch.unref();
  return {
    sink,
    streams,
    wrap: (journal) => eventingJournal(journal, sink),
    async webhookStates() {
      const pending = await outbox.pending();
      const states = new Map<string, WebhookState>();
      for (const keyId of webhooks().keys()) {
        const receiver = await outbox.receiver(keyId);
        states.set(keyId, {
          pending: pending.get(keyId) ?? 0,
          pausedAt: receiver?.pausedAt ?? null,
          failingSince: receiver?.failingSince ?? null,
          lastError: receiver?.lastError ?? null,
        });
      }
      return states;
    },
    start() {
      wanted = wantedNow(); // what start-up's reads of the journal follow already
      delivery.start();
    },
    async stop() {
      clearInterval(watch);
      await sink.flush();
      streams.close();
      await delivery.stop();
      await outbox.close();
    },
  };
}
