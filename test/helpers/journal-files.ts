/** Submissions and a data directory for tests of the journal's files. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import bs58 from 'bs58';
import type { NewSubmission } from '../../src/stores/journal';
import { makeDataDir } from './gateway';

/** A submission of `count` wire-like blobs (random bytes; the journal reads a signature at bytes 1..65). */
export function journalSubmission(kind: NewSubmission['kind'], count: number, extra: Partial<NewSubmission> = {}): NewSubmission {
  return {
    kind,
    keyId: 'key_test',
    antiMev: false,
    bundleId: null,
    routes: ['embedded'],
    transactions: Array.from({ length: count }, () => {
      const wire = Buffer.concat([Buffer.from([1]), crypto.randomBytes(64), crypto.randomBytes(40 + crypto.randomInt(900))]);
      return { signature: bs58.encode(wire.subarray(1, 65)), wire, state: 'forwarded' as const };
    }),
    ...extra,
  };
}

/** Runs `test` with the path of a journal in a fresh data directory, removed afterwards. */
export async function withJournalFile(test: (file: string, dir: string) => Promise<void> | void): Promise<void> {
  const dir = makeDataDir();
  try {
    await test(path.join(dir, 'journal.sqlite'), dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
