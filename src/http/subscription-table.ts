/**
 * Who holds which subscription: the open sockets with their keys, the signature and slot
 * subscriptions, and the counts the limits are checked against (per connection, per key over
 * all its connections, in total). One owner for these tables, so that every way a
 * subscription ends (unsubscribe, its notification, its socket closing) keeps the counts
 * right: a count that drifted would refuse a key's subscriptions, or let it past its limit.
 */
import type { WebSocket } from 'ws';
import type { Commitment, SubmissionFilter, SubscriptionRequest } from './subscription-requests';

export interface SignatureSubscription {
  readonly socket: WebSocket;
  readonly id: number;
  readonly signature: string;
  readonly commitment: Commitment;
}

/** A `submissionSubscribe`: which of its key's events it wants, and the last one read for it (the outbox's `ord`). */
export interface SubmissionSubscription {
  readonly socket: WebSocket;
  readonly id: number;
  readonly keyId: string;
  readonly filter: SubmissionFilter;
  afterOrd: number;
}

/** What the server knows of each open socket. */
export interface Peer {
  readonly presentedKey: string;
  readonly keyId: string;
  readonly subscriptions: Set<number>;
  lastMessageAt: number;
  awaitingPong: boolean;
  lastPingAt: number;
}

export interface TableLimits {
  readonly perConnection: number;
  readonly perKey: number;
  readonly total: number;
}

type Subscribe = Extract<SubscriptionRequest, { method: 'signatureSubscribe' | 'slotSubscribe' }>;

export class SubscriptionTable {
  private readonly signatures = new Map<number, SignatureSubscription>();
  private readonly slots = new Map<number, WebSocket>();
  private readonly submissions = new Map<number, SubmissionSubscription>();
  private readonly open = new Map<WebSocket, Peer>();
  private readonly perKey = new Map<string, number>();
  private nextId = 0;

  constructor(private readonly limits: TableLimits) {}

  /** Open sockets. */
  get sockets(): number {
    return this.open.size;
  }

  /** Subscriptions held, signatures, slots and submissions. */
  get size(): number {
    return this.signatures.size + this.slots.size + this.submissions.size;
  }

  peers(): IterableIterator<[WebSocket, Peer]> {
    return this.open.entries();
  }

  peer(socket: WebSocket): Peer | undefined {
    return this.open.get(socket);
  }

  has(socket: WebSocket): boolean {
    return this.open.has(socket);
  }

  /** The signature subscriptions as they are now: a round polls these even if some end meanwhile. */
  signatureSubscriptions(): SignatureSubscription[] {
    return [...this.signatures.values()];
  }

  submissionSubscriptions(): SubmissionSubscription[] {
    return [...this.submissions.values()];
  }

  slotSubscriptions(): IterableIterator<[number, WebSocket]> {
    return this.slots.entries();
  }

  connect(socket: WebSocket, presentedKey: string, keyId: string): void {
    const now = Date.now();
    this.open.set(socket, { presentedKey, keyId, subscriptions: new Set(), lastMessageAt: now, awaitingPong: false, lastPingAt: now });
  }

  /** A closed socket's subscriptions end with it. */
  forget(socket: WebSocket): void {
    const peer = this.open.get(socket);
    if (peer === undefined) return;
    for (const id of peer.subscriptions) {
      this.signatures.delete(id);
      this.slots.delete(id);
      this.submissions.delete(id);
    }
    this.countForKey(peer.keyId, -peer.subscriptions.size);
    this.open.delete(socket);
  }

  /** Why one more subscription is refused, or null. */
  overLimit(peer: Peer): string | null {
    const { perConnection, perKey, total } = this.limits;
    if (peer.subscriptions.size >= perConnection)
      return `at most ${perConnection} subscriptions per connection (maxSubscriptionsPerConnection): unsubscribe from some first`;
    if ((this.perKey.get(peer.keyId) ?? 0) >= perKey)
      return `at most ${perKey} subscriptions per API key (maxSubscriptionsPerKey), over all its connections: unsubscribe from some first`;
    if (this.size >= total) return `the gateway holds its limit of ${total} subscriptions (maxSubscriptions): try again later`;
    return null;
  }

  /** Records a subscription (its limits already checked); returns its id. */
  add(socket: WebSocket, peer: Peer, request: Subscribe): number {
    const subscription = ++this.nextId;
    if (request.method === 'signatureSubscribe')
      this.signatures.set(subscription, { socket, id: subscription, signature: request.signature, commitment: request.commitment });
    else this.slots.set(subscription, socket);
    peer.subscriptions.add(subscription);
    this.countForKey(peer.keyId, 1);
    return subscription;
  }

  /** Records a submission subscription (its limits already checked), streaming from after `afterOrd`; returns its id. */
  addSubmission(socket: WebSocket, peer: Peer, filter: SubmissionFilter, afterOrd: number): number {
    const subscription = ++this.nextId;
    this.submissions.set(subscription, { socket, id: subscription, keyId: peer.keyId, filter, afterOrd });
    peer.subscriptions.add(subscription);
    this.countForKey(peer.keyId, 1);
    return subscription;
  }

  /** Ends a subscription the client unsubscribes from; false when it holds none of that kind by that id. */
  unsubscribe(peer: Peer, kind: 'signature' | 'slot' | 'submission', subscription: number): boolean {
    const table: Map<number, unknown> = kind === 'slot' ? this.slots : kind === 'submission' ? this.submissions : this.signatures;
    if (!peer.subscriptions.has(subscription) || !table.has(subscription)) return false;
    table.delete(subscription);
    peer.subscriptions.delete(subscription);
    this.countForKey(peer.keyId, -1);
    return true;
  }

  /** Takes a signature subscription out of polling; false when it ended meanwhile. */
  endSignature(id: number): boolean {
    return this.signatures.delete(id);
  }

  /** Takes an ended signature subscription off its socket's and key's counts. */
  release(subscription: SignatureSubscription): void {
    const peer = this.open.get(subscription.socket);
    if (peer?.subscriptions.delete(subscription.id)) this.countForKey(peer.keyId, -1);
  }

  private countForKey(keyId: string, change: number): void {
    const count = (this.perKey.get(keyId) ?? 0) + change;
    if (count <= 0) this.perKey.delete(keyId);
    else this.perKey.set(keyId, count);
  }
}
