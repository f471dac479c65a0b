/** What `keys show` says of a key's webhook: where its events go, how many wait, and how its receiver is doing. */
import type { ReceiverStatus } from '../stores/event-outbox';

export interface WebhookView {
  readonly url: string | null;
  readonly pending: number;
  readonly receiver: ReceiverStatus | null;
}

export function describeReceiver({ url, pending, receiver }: WebhookView, now = Date.now()): string {
  const lines = [`webhook: ${url ?? 'off'}`, `events waiting: ${pending}`];
  const ago = (at: number) => `${new Date(at).toISOString()} (${Math.round((now - at) / 1000)} s ago)`;
  if (receiver !== null) {
    if (receiver.pausedAt !== null)
      lines.push(`PAUSED since ${ago(receiver.pausedAt)}: every delivery failed for too long; set the webhook again to resume`);
    if (receiver.failingSince !== null) lines.push(`failing since ${ago(receiver.failingSince)}`);
    if (receiver.lastError !== null) lines.push(`last error: ${receiver.lastError}`);
    if (receiver.lastDeliveredAt !== null) lines.push(`last delivered: ${ago(receiver.lastDeliveredAt)}`);
    if (receiver.dropped > 0) lines.push(`events dropped for a full queue: ${receiver.dropped}`);
  }
  return lines.map((line) => `  ${line}\n`).join('');
}
