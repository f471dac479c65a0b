/**
 * The journal log's encoding of one group of writes (a `WriteBatch`): binary for new
 * submissions, which every request writes (about 1 µs each, where v8.serialize or JSON
 * took 8 to 10), and JSON for state changes, attempt counts and protected sends' evidence,
 * which are written far less often and whose error field is JSON already.
 *
 *   f64 now, u32 record count,
 *   per record: f64 seq, u8 kind, u8 anti-MEV, str keyId, str? bundleId, str routes (comma-joined),
 *     u16 transaction count, per transaction: str signature, bytes wire, u8 state | 0x80,
 *     str? reasonCode, str? reason
 *   u32 byte length of the JSON of { changes, attempts, sends } (0 when all are empty), the JSON
 *
 * A `str` is a u16 byte length and UTF-8; `str?` uses 0xffff for null; `bytes` is a u16 length.
 * The state's high bit says that a code follows: frames written before the code had a field
 * of its own have it clear and only `str? reason` (`code: words`), and their changes' JSON no
 * `reasonCode`; they decode with no code, and journal-rows.ts reads such reasons.
 */
import { isOutcomeReason } from '../../core/outcome-reasons';
import { TRANSACTION_STATES as STATES, type SendRecord, type SubmissionKind } from './journal';
import type { LoggedChange, LoggedSubmission, WriteBatch } from './journal-sqlite-schema';

const KINDS: readonly SubmissionKind[] = ['transaction', 'batch', 'bundle'];
const NULL_LENGTH = 0xffff;
/** Set in a transaction's state byte: its reason's code follows, before the words. */
const WITH_CODE = 0x80;

/** Writes batches into one reused buffer, grown when a batch needs more. */
export class BatchEncoder {
  private buffer = Buffer.allocUnsafe(64 * 1024);
  private at = 0;

  /** Encodes `batch` after `reserved` bytes left free for the caller (a frame header); returns a view valid until the next call. */
  encode(batch: WriteBatch, reserved: number): Buffer {
    this.at = reserved;
    this.room(12);
    this.at = this.buffer.writeDoubleLE(batch.now, this.at);
    this.at = this.buffer.writeUInt32LE(batch.records.length, this.at);
    for (const { seq, submission } of batch.records) this.record(seq, submission);
    const rest =
      batch.changes.length === 0 && batch.attempts.length === 0 && batch.sends.length === 0
        ? ''
        : JSON.stringify({ changes: batch.changes, attempts: batch.attempts, sends: batch.sends });
    this.room(4 + rest.length * 3);
    const length = rest === '' ? 0 : this.buffer.write(rest, this.at + 4, 'utf8');
    this.buffer.writeUInt32LE(length, this.at);
    this.at += 4 + length;
    return this.buffer.subarray(0, this.at);
  }

  private record(seq: number, submission: LoggedSubmission): void {
    this.room(12);
    this.at = this.buffer.writeDoubleLE(seq, this.at);
    this.buffer[this.at++] = KINDS.indexOf(submission.kind);
    this.buffer[this.at++] = submission.antiMev ? 1 : 0;
    this.string(submission.keyId);
    this.string(submission.bundleId);
    this.string(submission.routes.join(','));
    this.room(2);
    this.at = this.buffer.writeUInt16LE(submission.transactions.length, this.at);
    for (const tx of submission.transactions) {
      this.string(tx.signature);
      this.room(3 + tx.wire.length);
      this.at = this.buffer.writeUInt16LE(tx.wire.length, this.at);
      this.at += tx.wire.copy(this.buffer, this.at);
      this.buffer[this.at++] = STATES.indexOf(tx.state) | WITH_CODE;
      this.string(tx.reasonCode ?? null);
      this.string(tx.reason ?? null);
    }
  }

  private string(value: string | null): void {
    if (value === null) {
      this.room(2);
      this.at = this.buffer.writeUInt16LE(NULL_LENGTH, this.at);
      return;
    }
    this.room(2 + value.length * 3);
    const length = this.buffer.write(value, this.at + 2, 'utf8');
    if (length >= NULL_LENGTH) throw new Error(`journal: a field of ${length} bytes is longer than the log can hold`);
    this.buffer.writeUInt16LE(length, this.at);
    this.at += 2 + length;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}

/** Decodes what `BatchEncoder.encode` wrote (without the reserved bytes); throws on bytes it did not write. */
export function decodeBatch(payload: Buffer): WriteBatch {
  let at = 0;
  const need = (bytes: number) => {
    if (at + bytes > payload.length) throw new Error('journal log: a batch ends early');
  };
  const u8 = () => (need(1), payload[at++]!);
  const u16 = () => (need(2), (at += 2), payload.readUInt16LE(at - 2));
  const f64 = () => (need(8), (at += 8), payload.readDoubleLE(at - 8));
  const bytes = (length: number) => (need(length), (at += length), payload.subarray(at - length, at));
  const string = (): string | null => {
    const length = u16();
    return length === NULL_LENGTH ? null : bytes(length).toString('utf8');
  };
  const text = () => string() ?? '';
  const oneOf = <T>(values: readonly T[], index = u8()) => {
    const value = values[index];
    if (value === undefined) throw new Error('journal log: an unknown kind or state');
    return value;
  };
  const reasonCode = () => {
    const code = string();
    if (code !== null && !isOutcomeReason(code)) throw new Error(`journal log: an unknown outcome reason ${JSON.stringify(code)}`);
    return code;
  };

  const now = f64();
  need(4);
  const count = payload.readUInt32LE(at);
  at += 4;
  const records: { seq: number; submission: LoggedSubmission }[] = [];
  for (let i = 0; i < count; i++) {
    const seq = f64();
    const kind = oneOf(KINDS);
    const antiMev = u8() === 1;
    const keyId = text();
    const bundleId = string();
    const routes = text();
    const transactions = Array.from({ length: u16() }, () => {
      const signature = text();
      const wire = Buffer.from(bytes(u16()));
      const stateByte = u8();
      const state = oneOf(STATES, stateByte & ~WITH_CODE);
      const code = (stateByte & WITH_CODE) === 0 ? null : reasonCode();
      const reason = string();
      return reason === null && code === null ? { signature, wire, state } : { signature, wire, state, reasonCode: code, reason };
    });
    records.push({ seq, submission: { kind, keyId, antiMev, bundleId, routes: routes === '' ? [] : routes.split(','), transactions } });
  }
  need(4);
  const jsonLength = payload.readUInt32LE(at);
  at += 4;
  type Rest = { changes: LoggedChange[]; attempts: { seq: number; position: number }[]; sends?: SendRecord[] };
  const rest = jsonLength === 0 ? { changes: [], attempts: [] } : (JSON.parse(bytes(jsonLength).toString('utf8')) as Rest);
  if (at !== payload.length) throw new Error('journal log: bytes after a batch');
  // Logs written before protected sends were journaled have no `sends`.
  return { now, records, changes: rest.changes, attempts: rest.attempts, sends: rest.sends ?? [] };
}
