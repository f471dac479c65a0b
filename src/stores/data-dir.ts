/**
 * The data directory is its owner's alone: it holds the key hashes, the journal (transactions
 * not yet landed are what a front-runner wants) and the ledger. Made so when it is created,
 * and again on every start, for a directory made by hand, restored from a backup or left by
 * an older Slipway (files 0644). What Slipway creates in it afterwards (SQLite's WAL and
 * shared-memory files, journal segments, ledger saves) is created 0600 through the
 * process's umask, which SQLite and every worker thread share.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Creates `dir` if need be, makes it and the files in it owner-only, and has new files made owner-only. Main thread only. */
export function prepareDataDir(dir: string): void {
  process.umask(process.umask() | 0o077);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ownerOnly = (target: string, mode: number) => {
    if ((fs.statSync(target).mode & 0o777 & ~mode) === 0) return;
    try {
      fs.chmodSync(target, mode);
    } catch (error) {
      throw new Error(
        `${target} is readable by other users and cannot be made its owner's alone (${(error as Error).message}); run Slipway as its owner, or run: chmod -R go= ${dir}`,
      );
    }
  };
  ownerOnly(dir, 0o700);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const target = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) ownerOnly(target, 0o700);
    else if (entry.isFile()) ownerOnly(target, 0o600);
  }
}
