/**
 * A TLS 1.3 record layer (RFC 8446 §5) over TCP, for tests only. QUIC carries the handshake
 * without records, so this is what lets our handshake state machines talk to Node's own TLS
 * (OpenSSL): an implementation that is not ours judges interoperability. Plaintext records
 * until the handshake secrets, then AES-128-GCM with key and IV from HKDF-Expand-Label, the
 * nonce the IV XOR the record's sequence number, the 5-byte header as additional data, and the
 * content type inside, after the content (RFC 8446 §5.2-5.3). ChangeCipherSpec is dropped.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import type net from 'node:net';
import { hkdfExpandLabel } from '../../src/quic/hkdf';
import type { EncryptionLevel, TlsCompletion, TlsOutput } from '../../src/quic/tls';

export const CONTENT_TYPE = { changeCipherSpec: 20, alert: 21, handshake: 22, applicationData: 23 } as const;
const MAX_PLAINTEXT = 16_384;
const TAG_LENGTH = 16;

export interface RecordKeys {
  readonly key: Buffer;
  readonly iv: Buffer;
}

/** The record key and IV of a traffic secret (RFC 8446 §7.3). */
export function recordKeys(secret: Buffer): RecordKeys {
  return { key: hkdfExpandLabel(secret, 'key', Buffer.alloc(0), 16), iv: hkdfExpandLabel(secret, 'iv', Buffer.alloc(0), 12) };
}

function nonce(iv: Buffer, sequence: number): Buffer {
  const result = Buffer.from(iv);
  const padded = Buffer.alloc(12);
  padded.writeBigUInt64BE(BigInt(sequence), 4);
  for (let i = 0; i < 12; i++) result[i]! ^= padded[i]!;
  return result;
}

/** A protected record: the content, its type, under the keys, as record `sequence`. */
export function sealRecord(keys: RecordKeys, sequence: number, contentType: number, content: Buffer): Buffer {
  const inner = Buffer.concat([content, Buffer.of(contentType)]);
  const header = Buffer.from([CONTENT_TYPE.applicationData, 0x03, 0x03, 0, 0]);
  header.writeUInt16BE(inner.length + TAG_LENGTH, 3);
  const cipher = createCipheriv('aes-128-gcm', keys.key, nonce(keys.iv, sequence));
  cipher.setAAD(header);
  const sealed = Buffer.concat([cipher.update(inner), cipher.final(), cipher.getAuthTag()]);
  return Buffer.concat([header, sealed]);
}

/** Opens a protected record (header included): its inner content type and content. Throws if it does not authenticate. */
export function openRecord(keys: RecordKeys, sequence: number, record: Buffer): { contentType: number; content: Buffer } {
  const header = record.subarray(0, 5);
  const body = record.subarray(5);
  const decipher = createDecipheriv('aes-128-gcm', keys.key, nonce(keys.iv, sequence));
  decipher.setAAD(header);
  decipher.setAuthTag(body.subarray(body.length - TAG_LENGTH));
  const inner = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_LENGTH)), decipher.final()]);
  let end = inner.length;
  while (end > 0 && inner[end - 1] === 0) end--; // zero padding
  if (end === 0) throw new Error('a record with no content type');
  return { contentType: inner[end - 1]!, content: inner.subarray(0, end - 1) };
}

interface Direction {
  keys?: RecordKeys;
  sequence: number;
}

/**
 * Runs one of our handshakes over a TCP socket in records. `done` resolves with the handshake's
 * completion, or rejects with what failed (our TlsAlert, or the peer's alert).
 */
export class TlsOverTcp {
  readonly done: Promise<TlsCompletion>;
  private resolve!: (completion: TlsCompletion) => void;
  private reject!: (error: Error) => void;
  private readonly write: Partial<Record<EncryptionLevel, Direction>> = { initial: { sequence: 0 } };
  private readonly read: Partial<Record<EncryptionLevel, Direction>> = { initial: { sequence: 0 } };
  private readLevel: EncryptionLevel = 'initial';
  private pending = Buffer.alloc(0);
  private readonly applicationData: Buffer[] = [];
  private waiting?: { bytes: number; resolve: (data: Buffer) => void; reject: (error: Error) => void };
  private failure?: Error;

  constructor(
    private readonly socket: net.Socket,
    private readonly side: 'client' | 'server',
    private readonly handshake: { receive(level: EncryptionLevel, data: Buffer): TlsOutput },
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.done.catch(() => {}); // a test that never awaits it should not crash the process
    socket.on('data', (data: Buffer) => this.onData(data));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the connection closed')));
  }

  /** Applies a handshake output: installs the secrets, writes the bytes. */
  apply(output: TlsOutput): void {
    for (const secrets of output.secrets) {
      const [mine, theirs] = this.side === 'client' ? [secrets.client, secrets.server] : [secrets.server, secrets.client];
      this.write[secrets.level] = { keys: recordKeys(mine), sequence: 0 };
      this.read[secrets.level] = { keys: recordKeys(theirs), sequence: 0 };
      if (secrets.level === 'handshake') this.readLevel = 'handshake';
    }
    for (const { level, data } of output.send) this.writeRecords(level, CONTENT_TYPE.handshake, data);
    if (output.complete) {
      this.readLevel = 'application';
      this.resolve(output.complete);
    }
  }

  sendApplicationData(data: Buffer): void {
    this.writeRecords('application', CONTENT_TYPE.applicationData, data);
  }

  /** The first `bytes` bytes of application data received; rejects if the connection fails first. */
  receiveApplicationData(bytes: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      this.waiting = { bytes, resolve, reject };
      this.deliver();
      if (this.failure) reject(this.failure);
    });
  }

  /** The first failure ends everything waiting: the handshake, and application data expected. */
  private fail(error: Error): void {
    this.failure ??= error;
    this.reject(this.failure);
    this.waiting?.reject(this.failure);
  }

  private deliver(): void {
    const received = Buffer.concat(this.applicationData);
    if (this.waiting && received.length >= this.waiting.bytes) this.waiting.resolve(received.subarray(0, this.waiting.bytes));
  }

  private writeRecords(level: EncryptionLevel, contentType: number, data: Buffer): void {
    const direction = this.write[level];
    if (!direction) throw new Error(`no ${level} keys to write with`);
    for (let offset = 0; offset < data.length; offset += MAX_PLAINTEXT) {
      const fragment = data.subarray(offset, offset + MAX_PLAINTEXT);
      if (!direction.keys) {
        const header = Buffer.from([contentType, 0x03, 0x03, 0, 0]);
        header.writeUInt16BE(fragment.length, 3);
        this.socket.write(Buffer.concat([header, fragment]));
      } else {
        this.socket.write(sealRecord(direction.keys, direction.sequence++, contentType, fragment));
      }
    }
  }

  private onData(data: Buffer): void {
    this.pending = Buffer.concat([this.pending, data]);
    try {
      while (this.pending.length >= 5) {
        const length = this.pending.readUInt16BE(3);
        if (this.pending.length < 5 + length) return;
        const record = this.pending.subarray(0, 5 + length);
        this.pending = this.pending.subarray(5 + length);
        this.onRecord(record);
      }
    } catch (error) {
      // Our handshake's alert goes to the peer, so that its own error says why (RFC 8446 §6).
      const alert = (error as { alert?: unknown }).alert;
      if (typeof alert === 'number') {
        // With the newest keys we write with: the server's after its Finished are the application ones.
        const level = this.write.application ? 'application' : this.write.handshake ? 'handshake' : 'initial';
        this.writeRecords(level, CONTENT_TYPE.alert, Buffer.of(2, alert));
      }
      this.fail(error as Error);
      this.socket.end();
    }
  }

  private onRecord(record: Buffer): void {
    const outerType = record[0]!;
    if (outerType === CONTENT_TYPE.changeCipherSpec) return; // middlebox compatibility (RFC 8446 §D.4)
    const direction = this.read[this.readLevel]!;
    let contentType = outerType;
    let content = record.subarray(5);
    if (direction.keys) {
      if (outerType !== CONTENT_TYPE.applicationData) throw new Error(`a plaintext record of type ${outerType} after the keys changed`);
      ({ contentType, content } = openRecord(direction.keys, direction.sequence++, record));
    }
    if (contentType === CONTENT_TYPE.alert) throw new Error(`the peer sent alert ${content[0]}/${content[1]}`);
    if (contentType === CONTENT_TYPE.handshake) this.apply(this.handshake.receive(this.readLevel, content));
    else if (contentType === CONTENT_TYPE.applicationData && this.readLevel === 'application') {
      this.applicationData.push(content);
      this.deliver();
    } else throw new Error(`a record of type ${contentType} at the ${this.readLevel} level`);
  }
}
