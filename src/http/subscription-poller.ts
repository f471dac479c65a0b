/**
 * The one timer that serves every open subscription: each round asks the slot, then the
 * statuses of all pending signatures, up to 256 per request, and notifies the ones that
 * reached their commitment. One request for many subscribers keeps the upstream's load
 * independent of how many clients wait; a batch the upstream refuses is split so that one
 * entry never holds up the others.
 *
 * Subscriptions are reads, and cost the operator's upstream as reads do: each round's status
 * requests for a key's signatures count one per 256 signatures (a fraction for fewer: they
 * share a request with others'). A key past its rate has its signatures polled less often
 * (in turn, so none starves), not dropped.
 */
import type { Authenticator } from '../auth/authenticator';
import type { KeyLimits } from '../limits/key-limits';
import type { Router } from '../pipeline/router';
import type { SignatureStatusView } from '../upstreams/upstream';
import { COMMITMENT_RANK } from './subscription-requests';
import { sendMessage } from './subscription-socket';
import type { SignatureSubscription, SubscriptionTable } from './subscription-table';

const STATUS_BATCH = 256;

export interface SubscriptionPollerOptions {
  readonly authenticator: Authenticator;
  readonly router: Router;
  /** The keys' reads per second, which polling counts against. */
  readonly keyLimits: Pick<KeyLimits, 'reads'>;
  readonly pollIntervalMs: number;
  readonly logError: (error: unknown, what: string) => void;
}

export class SubscriptionPoller {
  private timer: NodeJS.Timeout | undefined;
  /** A round still waiting on the upstream is not overlapped by the next. */
  private polling = false;
  private lastSlot = -1;
  /** Per key with a reads rate: the batch its next round starts at, so that none starves. */
  private readonly nextBatch = new Map<string, number>();

  constructor(
    private readonly table: SubscriptionTable,
    private readonly options: SubscriptionPollerOptions,
  ) {}

  /** Polls from now on; the timer starts with the first subscription, not with the server. */
  start(): void {
    this.timer ??= setInterval(() => void this.poll(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One round for all subscriptions: the slot, then statuses in batches. */
  private async poll(): Promise<void> {
    if (this.polling || this.table.size === 0) return;
    this.polling = true;
    try {
      let slot = this.lastSlot;
      try {
        slot = await this.options.router.getSlot();
      } catch (error) {
        this.options.logError(error, 'getSlot for subscriptions');
      }
      if (slot !== this.lastSlot && slot >= 0) {
        for (const [subscription, socket] of this.table.slotSubscriptions()) {
          sendMessage(socket, {
            jsonrpc: '2.0',
            method: 'slotNotification',
            params: { result: { parent: slot - 1, root: Math.max(0, slot - 32), slot }, subscription },
          });
        }
        this.lastSlot = slot;
      }
      const pending = await this.withinReadRates(this.table.signatureSubscriptions());
      for (let i = 0; i < pending.length; i += STATUS_BATCH) await this.notify(pending.slice(i, i + STATUS_BATCH));
    } finally {
      this.polling = false;
    }
  }

  /**
   * The subscriptions polled this round: all of a key without a reads rate; of a key with
   * one, as many batches of 256 as its rate allows, starting where the last round stopped.
   */
  private async withinReadRates(pending: SignatureSubscription[]): Promise<SignatureSubscription[]> {
    const byKey = new Map<string, { presentedKey: string; subscriptions: SignatureSubscription[] }>();
    for (const subscription of pending) {
      const peer = this.table.peer(subscription.socket);
      if (peer === undefined) continue;
      const entry = byKey.get(peer.keyId) ?? { presentedKey: peer.presentedKey, subscriptions: [] };
      entry.subscriptions.push(subscription);
      byKey.set(peer.keyId, entry);
    }
    const polled: SignatureSubscription[] = [];
    for (const [keyId, { presentedKey, subscriptions }] of byKey) {
      const key = this.options.authenticator.authenticate(presentedKey);
      if (key === null) continue;
      if (key.readsPerSecond === null) {
        polled.push(...subscriptions);
        continue;
      }
      const batches = Math.ceil(subscriptions.length / STATUS_BATCH);
      const first = (this.nextBatch.get(keyId) ?? 0) % batches;
      let taken = 0;
      while (taken < batches) {
        const batch = subscriptions.slice(((first + taken) % batches) * STATUS_BATCH, (((first + taken) % batches) + 1) * STATUS_BATCH);
        // A batch costs its share of a status request: a few signatures ride along with others'.
        const charged = await this.options.keyLimits.reads(key, batch.length / STATUS_BATCH).catch(() => undefined);
        if (charged === undefined || !charged.ok) break;
        polled.push(...batch);
        taken += 1;
      }
      this.nextBatch.set(keyId, first + taken);
    }
    for (const keyId of this.nextBatch.keys()) if (!byKey.has(keyId)) this.nextBatch.delete(keyId);
    return polled;
  }

  /**
   * Asks the statuses of `chunk` and notifies the final ones. A batch the upstream refuses is
   * asked again in halves, down to single signatures, so that one entry it will not answer
   * leaves the others unaffected (that one is asked again next round).
   */
  private async notify(chunk: SignatureSubscription[]): Promise<void> {
    let statuses: (SignatureStatusView | null)[];
    try {
      statuses = await this.options.router.reads.getSignatureStatuses(chunk.map((s) => s.signature));
    } catch (error) {
      if (chunk.length === 1) return this.options.logError(error, 'getSignatureStatuses for a subscription');
      const half = Math.ceil(chunk.length / 2);
      await this.notify(chunk.slice(0, half));
      return this.notify(chunk.slice(half));
    }
    chunk.forEach((subscription, j) => {
      const status = statuses[j];
      if (!status?.confirmationStatus || COMMITMENT_RANK[status.confirmationStatus] < COMMITMENT_RANK[subscription.commitment]) return;
      if (!this.table.endSignature(subscription.id)) return; // unsubscribed meanwhile
      sendMessage(subscription.socket, {
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: { result: { context: { slot: status.slot }, value: { err: status.err } }, subscription: subscription.id },
      });
      // Solana ends a signature subscription after its notification.
      this.table.release(subscription);
    });
  }
}
