/**
 * The data directory is its owner's alone: it holds the key hashes, the journal (transactions
 * not yet landed are what a front-runner wants) and the ledger. Made so when it is created,
 * and again on every start, for a directory made by hand, restored from a backup or left by
 * an older Slipway (files 0644). What Slipway creates in it afterwards (SQLite's WAL and
 * shared-memory files, journal segments, ledger saves) is created 0600 through the
 * process's umask, which SQLite and every worker thread share.
 *
 * A directory that belongs to another user is refused, as ssh refuses a key file others
 * own: its owner could read everything in it whatever its mode. Modes are changed through a
 * descriptor opened without following links, so that a file swapped for a link to one
 * outside the directory between listing and changing is left alone, not made 0600.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Creates `dir` if need be, makes it and the files in it owner-only, and has new files made owner-only. Main thread only. */
export function prepareDataDir(dir: string): void {
  process.umask(process.umask() | 0o077);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const uid = process.geteuid?.();
  const owner = fs.statSync(dir); // a data dir given as a link is its target's
  if (uid !== undefined && owner.uid !== uid) {
    throw new Error(
      `${dir} belongs to user ${owner.uid}, not to the user Slipway runs as (${uid}): run Slipway as that user, or give it the directory: chown -R ${uid} ${dir}`,
    );
  }
  ownerOnly(fs.realpathSync(dir), 0o700, dir);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const target = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) ownerOnly(target, 0o700, dir);
    else if (entry.isFile()) ownerOnly(target, 0o600, dir);
  }
}

/**
 * Takes group and other permissions off `target`, if it is still what was listed (not a link,
 * not gone). Looked at by name first, and opened only when its mode must change: this runs
 * while this process may hold SQLite databases open in the directory, and closing any
 * descriptor of such a file drops the process's POSIX locks on it (SQLite's warning), which
 * lets another process's writes go unseen.
 */
function ownerOnly(target: string, mode: number, dir: string): void {
  let listed: fs.Stats;
  try {
    listed = fs.lstatSync(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw cannotMake(target, dir, error);
  }
  if (listed.isSymbolicLink() || (listed.mode & 0o777 & ~mode) === 0) return;
  let fd: number;
  try {
    fd = fs.openSync(target, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP') return; // gone, or swapped for a link since it was listed
    if (code === 'EACCES' && !fs.lstatSync(target).isSymbolicLink()) {
      // Its owner may not read it (mode 0200, say): change it by name, as before.
      try {
        fs.chmodSync(target, mode);
        return;
      } catch (chmodError) {
        throw cannotMake(target, dir, chmodError);
      }
    }
    throw cannotMake(target, dir, error);
  }
  try {
    if ((fs.fstatSync(fd).mode & 0o777 & ~mode) === 0) return;
    fs.fchmodSync(fd, mode);
  } catch (error) {
    throw cannotMake(target, dir, error);
  } finally {
    fs.closeSync(fd);
  }
}

const cannotMake = (target: string, dir: string, error: unknown) =>
  new Error(
    `${target} is readable by other users and cannot be made its owner's alone (${(error as Error).message}); run Slipway as its owner, or run: chmod -R go= ${dir}`,
  );
