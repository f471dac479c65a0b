/**
 * Our unidirectional streams (RFC 9000 §2–4): one transaction each, opened only within the
 * peer's stream credit (MAX_STREAMS) and sent within its flow-control limits, lost ranges
 * sent again first, and a stream done when every byte and its FIN are acknowledged. Waiting
 * transactions queue here, boundedly, until credit comes.
 */
import { QuicError, TRANSPORT_ERROR } from './wire';

export interface StreamPiece {
  readonly streamId: number;
  readonly offset: number;
  readonly data: Buffer;
  readonly fin: boolean;
}

class SendStream<T> {
  /** The first byte never sent. */
  sentUpTo = 0;
  finSent = false;
  readonly lost: { offset: number; length: number; fin: boolean }[] = [];
  private ackedBytes = 0;
  private ackedRanges: { offset: number; length: number }[] = [];
  finAcked = false;

  constructor(
    readonly id: number,
    readonly data: Buffer,
    readonly tag: T,
    public maxData: number,
  ) {}

  get done(): boolean {
    return this.finAcked && this.ackedBytes === this.data.length;
  }

  acked(offset: number, length: number, fin: boolean): void {
    if (fin) this.finAcked = true;
    if (length === 0) return;
    // Merged into disjoint ranges, so that a byte acknowledged twice (sent twice) counts once.
    let start = offset;
    let end = offset + length;
    const kept: { offset: number; length: number }[] = [];
    for (const range of this.ackedRanges) {
      if (range.offset + range.length < start || range.offset > end) kept.push(range);
      else {
        start = Math.min(start, range.offset);
        end = Math.max(end, range.offset + range.length);
      }
    }
    kept.push({ offset: start, length: end - start });
    this.ackedRanges = kept;
    this.ackedBytes = kept.reduce((sum, range) => sum + range.length, 0);
  }
}

export class UniStreams<T> {
  private readonly waiting: { data: Buffer; tag: T }[] = [];
  private readonly streams = new Map<number, SendStream<T>>();
  /** Streams with bytes never sent, in the order opened. */
  private readonly fresh: SendStream<T>[] = [];
  /** Streams with lost ranges to send again. */
  private readonly retransmit: SendStream<T>[] = [];
  private opened = 0;
  /** The peer's stream credit: how many of our uni streams it allows in all (MAX_STREAMS). */
  private limit = 0;
  private maxData = 0;
  private dataSent = 0;
  private streamWindow = 0;

  constructor(
    /** 2 for a client's unidirectional streams, 3 for a server's (RFC 9000 §2.1). */
    private readonly firstId: 2 | 3,
    private readonly maxWaiting: number,
  ) {}

  /** The peer's limits from its transport parameters. */
  configure(streams: number, maxData: number, streamWindow: number): void {
    this.limit = Math.max(this.limit, streams);
    this.maxData = Math.max(this.maxData, maxData);
    this.streamWindow = streamWindow;
    this.openWaiting();
  }

  /** Queues a transaction; false when the queue is full. */
  enqueue(data: Buffer, tag: T): boolean {
    if (this.waiting.length >= this.maxWaiting) return false;
    this.waiting.push({ data, tag });
    this.openWaiting();
    return true;
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  get openCount(): number {
    return this.streams.size;
  }

  /** Streams the peer's credit still allows us to open. */
  get credit(): number {
    return this.limit - this.opened;
  }

  private openWaiting(): void {
    while (this.waiting.length > 0 && this.opened < this.limit) {
      const { data, tag } = this.waiting.shift()!;
      const stream = new SendStream(this.firstId + 4 * this.opened, data, tag, this.streamWindow);
      this.opened++;
      this.streams.set(stream.id, stream);
      this.fresh.push(stream);
    }
  }

  maxStreams(maximum: number): void {
    if (maximum > this.limit) {
      this.limit = maximum;
      this.openWaiting();
    }
  }

  maxDataFrame(maximum: number): void {
    this.maxData = Math.max(this.maxData, maximum);
  }

  maxStreamData(streamId: number, maximum: number): void {
    if (streamId % 4 !== this.firstId)
      throw new QuicError(TRANSPORT_ERROR.STREAM_STATE_ERROR, `MAX_STREAM_DATA for stream ${streamId}, which is not ours`);
    const stream = this.streams.get(streamId);
    if (stream === undefined) {
      if ((streamId - this.firstId) / 4 >= this.opened)
        throw new QuicError(TRANSPORT_ERROR.STREAM_STATE_ERROR, `MAX_STREAM_DATA for stream ${streamId}, never opened`);
      return;
    }
    stream.maxData = Math.max(stream.maxData, maximum);
  }

  hasData(): boolean {
    return this.retransmit.length > 0 || this.fresh.some((stream) => this.sendable(stream) > 0 || this.finReady(stream));
  }

  private sendable(stream: SendStream<T>): number {
    return Math.min(stream.data.length, stream.maxData) - stream.sentUpTo;
  }

  private finReady(stream: SendStream<T>): boolean {
    return !stream.finSent && stream.sentUpTo === stream.data.length;
  }

  /** The next piece to send in at most `room` bytes of data: lost ranges first, then new bytes. */
  next(room: number): StreamPiece | null {
    if (room <= 0) return null;
    while (this.retransmit.length > 0) {
      const stream = this.retransmit[0]!;
      const range = stream.lost.shift();
      if (range === undefined || !this.streams.has(stream.id)) {
        this.retransmit.shift();
        continue;
      }
      const length = Math.min(range.length, room);
      if (length < range.length) stream.lost.unshift({ offset: range.offset + length, length: range.length - length, fin: range.fin });
      if (stream.lost.length === 0) this.retransmit.shift();
      return {
        streamId: stream.id,
        offset: range.offset,
        data: stream.data.subarray(range.offset, range.offset + length),
        fin: range.fin && length === range.length,
      };
    }
    for (let i = 0; i < this.fresh.length; i++) {
      const stream = this.fresh[i]!;
      const connectionRoom = this.maxData - this.dataSent;
      const length = Math.min(this.sendable(stream), room, connectionRoom);
      if (length <= 0 && !this.finReady(stream)) continue;
      const offset = stream.sentUpTo;
      stream.sentUpTo += Math.max(0, length);
      this.dataSent += Math.max(0, length);
      const fin = stream.sentUpTo === stream.data.length;
      if (fin) {
        stream.finSent = true;
        this.fresh.splice(i, 1);
      }
      return { streamId: stream.id, offset, data: stream.data.subarray(offset, offset + Math.max(0, length)), fin };
    }
    return null;
  }

  /** A piece was acknowledged; returns the stream's tag when the stream is now done. */
  acked(piece: { streamId: number; offset: number; length: number; fin: boolean }): T | undefined {
    const stream = this.streams.get(piece.streamId);
    if (stream === undefined) return undefined;
    stream.acked(piece.offset, piece.length, piece.fin);
    if (!stream.done) return undefined;
    this.streams.delete(stream.id);
    return stream.tag;
  }

  lost(piece: { streamId: number; offset: number; length: number; fin: boolean }): void {
    const stream = this.streams.get(piece.streamId);
    if (stream === undefined) return;
    stream.lost.push({ offset: piece.offset, length: piece.length, fin: piece.fin });
    if (stream.lost.length === 1) this.retransmit.push(stream);
  }

  /** The peer asked us to stop a stream (STOP_SENDING): it is dropped; returns its tag and the bytes sent (its final size). */
  stop(streamId: number): { tag: T; finalSize: number } | undefined {
    const stream = this.streams.get(streamId);
    if (stream === undefined) return undefined;
    this.streams.delete(streamId);
    const fresh = this.fresh.indexOf(stream);
    if (fresh >= 0) this.fresh.splice(fresh, 1);
    return { tag: stream.tag, finalSize: stream.sentUpTo };
  }

  isOurs(streamId: number): boolean {
    return streamId % 4 === this.firstId;
  }

  /** Every tag not yet delivered (the connection is gone): open streams first, then the queue. */
  drain(): T[] {
    const tags = [...this.streams.values()].map((stream) => stream.tag).concat(this.waiting.map((entry) => entry.tag));
    this.streams.clear();
    this.fresh.length = 0;
    this.retransmit.length = 0;
    this.waiting.length = 0;
    return tags;
  }
}
