/**
 * Refused submissions added up in memory and written to the refusal counts once a second:
 * a flood of refusals costs a map update each and one write a second, never a write each.
 * The submission service tells it of every refusal (http/submission-service.ts); a refusal of a
 * submission already journaled (its route refused it after it was recorded as `rejected`)
 * is the journal's to count, and is skipped here.
 */
import { refusalReason } from '../errors/refusal-reasons';
import type { SlipwayError } from '../errors/error-catalogue';
import { minuteOf, type RefusalCount, type RefusalCounts, type RefusedOperation } from '../stores/refusal-counts';

/** How often the sums are written. */
const FLUSH_MS = 1_000;

export class RefusalCountBuffer {
  private pending = new Map<string, RefusalCount>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly store: RefusalCounts,
    private readonly logError: (error: unknown, what: string) => void,
    private readonly flushMs = FLUSH_MS,
  ) {}

  /**
   * Counts a refused submission: its transactions (what `encoded` holds: one, or the
   * members of a batch or bundle; at least one), under the refusal's outcome reason.
   */
  refused(keyId: string, operation: RefusedOperation, error: SlipwayError, encoded: unknown): void {
    if (error.journaled === true) return;
    const transactions = Array.isArray(encoded) ? Math.max(1, encoded.length) : 1;
    this.add(keyId, operation, refusalReason(error), transactions);
  }

  add(keyId: string, operation: RefusedOperation, reasonCode: RefusalCount['reasonCode'], count: number, at = Date.now()): void {
    const minute = minuteOf(at);
    const key = `${keyId}\n${operation}\n${reasonCode}\n${minute}`;
    const before = this.pending.get(key);
    this.pending.set(key, { keyId, operation, reasonCode, minute, count: (before?.count ?? 0) + count });
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  /** Writes what was added since the last write; what a failed write held is kept for the next. */
  async flush(): Promise<void> {
    await this.flushing;
    if (this.pending.size === 0) return;
    const counts = [...this.pending.values()];
    this.pending = new Map();
    this.flushing = this.store.add(counts).then(
      () => undefined,
      (error: unknown) => {
        for (const c of counts) this.add(c.keyId, c.operation, c.reasonCode, c.count, c.minute);
        this.logError(error, 'writing the refusal counts');
      },
    );
    await this.flushing;
  }

  /** Stops the timer, writes what is left, and closes the store. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    await this.store.close();
  }
}
