/**
 * The client's unidirectional streams as a TPU server receives them: one transaction each,
 * put together from STREAM frames in any order, handed on whole at its FIN. What Agave's
 * streamer enforces is enforced here: a stream that is empty or longer than the limit
 * closes the connection (application code 5, invalid stream); a stream past the credit
 * given (MAX_STREAMS) is a STREAM_LIMIT_ERROR. Credit is renewed as streams finish, so at
 * most `window` are open at once; connection-level flow control likewise.
 */
import { QuicError, TRANSPORT_ERROR } from './wire';

/** Agave's close code for an empty or over-long stream. */
export const INVALID_STREAM_CODE = 5;

const MAX_PIECES = 256;

export class InvalidStream extends Error {
  constructor(message: string) {
    super(message);
  }
}

interface Incoming {
  readonly pieces: { offset: number; data: Buffer }[];
  finalSize: number;
  /** Bytes received, each counted once. */
  received: number;
  /** The end of the furthest data received: a final size may not be below it (RFC 9000 §4.5). */
  furthest: number;
}

export class ReceiveStreams {
  private readonly open = new Map<number, Incoming>();
  /** Streams below this index are finished or never will be; above it, `finished` holds the ones done early. */
  private finishedBelow = 0;
  private readonly finished = new Set<number>();
  /** MAX_STREAMS last given: streams with index below it may be opened. */
  limit: number;
  private window: number;
  private dataLimit: number;
  private dataReceived = 0;
  private readonly dataWindow: number;

  constructor(
    private readonly maxStreamBytes: number,
    /** Streams open at once (0 until the handshake says who the peer is). */
    window: number,
  ) {
    this.window = window;
    this.limit = window;
    this.dataWindow = Math.max(1, window) * maxStreamBytes;
    this.dataLimit = 1 << 24;
  }

  /** The connection-level data limit to advertise in the transport parameters. */
  get initialMaxData(): number {
    return this.dataLimit;
  }

  /** Sets how many streams may be open at once; returns the MAX_STREAMS value to send if it grew. */
  setWindow(window: number): number | null {
    this.window = window;
    return this.renew();
  }

  /** A STREAM frame; returns the whole transaction when this frame finished it. Throws QuicError or InvalidStream. */
  receive(streamId: number, offset: number, data: Buffer, fin: boolean): Buffer | null {
    if (streamId % 4 !== 2) {
      throw new QuicError(
        streamId % 4 === 0 ? TRANSPORT_ERROR.STREAM_LIMIT_ERROR : TRANSPORT_ERROR.STREAM_STATE_ERROR,
        `stream ${streamId}: a TPU takes only the client's unidirectional streams`,
      );
    }
    const index = (streamId - 2) / 4;
    if (index >= this.limit)
      throw new QuicError(TRANSPORT_ERROR.STREAM_LIMIT_ERROR, `stream ${streamId} is past the credit given (${this.limit} streams)`);
    if (index < this.finishedBelow || this.finished.has(index)) return null;
    const end = offset + data.length;
    if (end > this.maxStreamBytes) throw new InvalidStream(`stream ${streamId} is longer than ${this.maxStreamBytes} bytes`);
    let stream = this.open.get(index);
    if (stream === undefined) {
      stream = { pieces: [], finalSize: -1, received: 0, furthest: 0 };
      this.open.set(index, stream);
    }
    if (fin) {
      if (stream.finalSize >= 0 && stream.finalSize !== end)
        throw new QuicError(TRANSPORT_ERROR.FINAL_SIZE_ERROR, `stream ${streamId} changed its final size`);
      if (end < stream.furthest) throw new QuicError(TRANSPORT_ERROR.FINAL_SIZE_ERROR, `stream ${streamId} ends below data it sent`);
      stream.finalSize = end;
    }
    if (stream.finalSize >= 0 && end > stream.finalSize)
      throw new QuicError(TRANSPORT_ERROR.FINAL_SIZE_ERROR, `stream ${streamId} sent past its final size`);
    stream.furthest = Math.max(stream.furthest, end);
    const fresh = this.addPiece(stream, offset, data);
    this.dataReceived += fresh;
    if (this.dataReceived > this.dataLimit)
      throw new QuicError(TRANSPORT_ERROR.FLOW_CONTROL_ERROR, 'more stream data than MAX_DATA allows');
    if (stream.finalSize < 0 || stream.received < stream.finalSize) return null;
    this.finish(index);
    if (stream.finalSize === 0) throw new InvalidStream(`stream ${streamId} is empty`);
    return assemblePieces(stream);
  }

  /** RESET_STREAM: the stream is given up; its credit is returned. Its final size must agree with what was sent (RFC 9000 §4.5). */
  reset(streamId: number, finalSize: number): void {
    if (streamId % 4 !== 2)
      throw new QuicError(TRANSPORT_ERROR.STREAM_STATE_ERROR, `RESET_STREAM for stream ${streamId}, which the client cannot send on`);
    const index = (streamId - 2) / 4;
    if (index >= this.limit)
      throw new QuicError(
        TRANSPORT_ERROR.STREAM_LIMIT_ERROR,
        `RESET_STREAM for stream ${streamId}, past the credit given (${this.limit} streams)`,
      );
    if (index < this.finishedBelow || this.finished.has(index)) return;
    const stream = this.open.get(index);
    if (stream !== undefined && (finalSize < stream.furthest || (stream.finalSize >= 0 && stream.finalSize !== finalSize)))
      throw new QuicError(
        TRANSPORT_ERROR.FINAL_SIZE_ERROR,
        `RESET_STREAM for stream ${streamId} with a final size of ${finalSize}, below what it sent`,
      );
    this.finish(index);
  }

  private addPiece(stream: Incoming, offset: number, data: Buffer): number {
    if (data.length === 0) return 0;
    // A client sends a transaction in a piece or three; thousands of slivers are an attack on memory.
    if (stream.pieces.length >= MAX_PIECES)
      throw new QuicError(TRANSPORT_ERROR.PROTOCOL_VIOLATION, `a stream sent in more than ${MAX_PIECES} pieces`);
    stream.pieces.push({ offset, data });
    const before = stream.received;
    stream.received = coveredBytes(stream.pieces);
    return stream.received - before;
  }

  private finish(index: number): void {
    this.open.delete(index);
    this.finished.add(index);
    while (this.finished.has(this.finishedBelow)) this.finished.delete(this.finishedBelow++);
  }

  /** The MAX_STREAMS value to send when credit has been used up by half the window, else null. */
  renew(): number | null {
    const wanted = this.finishedBelow + this.finished.size + this.window;
    if (this.window === 0 || wanted < this.limit + Math.max(1, this.window / 2)) return null;
    this.limit = wanted;
    return this.limit;
  }

  /** The MAX_DATA value to send when half the connection window has been used, else null. */
  renewData(): number | null {
    if (this.dataLimit - this.dataReceived > this.dataWindow / 2 && this.dataLimit - this.dataReceived > 1 << 23) return null;
    this.dataLimit = this.dataReceived + Math.max(this.dataWindow, 1 << 24);
    return this.dataLimit;
  }

  get openCount(): number {
    return this.open.size;
  }
}

function coveredBytes(pieces: readonly { offset: number; data: Buffer }[]): number {
  const ranges = pieces.map((piece) => [piece.offset, piece.offset + piece.data.length] as const).sort((a, b) => a[0] - b[0]);
  let covered = 0;
  let reach = 0;
  for (const [start, end] of ranges) {
    if (end <= reach) continue;
    covered += end - Math.max(start, reach);
    reach = end;
  }
  return covered;
}

function assemblePieces(stream: Incoming): Buffer {
  const whole = Buffer.allocUnsafe(stream.finalSize);
  for (const piece of stream.pieces) piece.data.copy(whole, piece.offset);
  return whole;
}
