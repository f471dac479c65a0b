/**
 * Keeps the embedded ledger's state saved: at start, after every change the journal does not
 * cover (airdrops), every `intervalMs`, and at shutdown. Each save records the journal
 * position it covers (`watermark`), so that recovery replays only what came after.
 */
import type { LocalLedger } from './local-ledger';

export interface LedgerSnapshots {
  save(): void;
  stop(): void;
}

export function keepLedgerSaved(ledger: LocalLedger, dir: string, intervalMs: number, watermark: () => number): LedgerSnapshots {
  const save = () => {
    ledger.journalSeq = watermark();
    ledger.save(dir);
  };
  save();
  ledger.onUnjournaledChange = save;
  const timer = setInterval(save, intervalMs);
  timer.unref();
  return {
    save,
    stop: () => clearInterval(timer),
  };
}
