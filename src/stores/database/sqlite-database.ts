/**
 * Opens a SQLite database for Slipway: WAL (readers never block the writer, and the CLI
 * can change keys while the server runs), a busy timeout for that concurrent writer, and
 * versioned migrations tracked in `PRAGMA user_version`.
 *
 * `synchronous=NORMAL` in WAL mode survives the process being killed (kill -9): a committed
 * transaction is in the WAL file before the call returns. Power loss can lose the last
 * commits; `synchronous: 'FULL'` closes that gap at a cost per write (docs/CONFIG.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import Database from './sqlite-binding';

export type SqliteDatabase = BetterSqlite3.Database;

export interface SqliteOptions {
  readonly synchronous?: 'NORMAL' | 'FULL';
  /** False when another thread checkpoints the WAL (the journal applier, journal-applier.ts). */
  readonly autoCheckpoint?: boolean;
  /** The size the WAL file is cut back to when it is reset (SQLite's journal_size_limit); none by default. */
  readonly walSizeLimit?: number;
}

/** Each entry migrates from version i to i + 1; entries are never edited once released. */
export type Migrations = readonly string[];

export function openSqlite(file: string, migrations: Migrations, options: SqliteOptions = {}): SqliteDatabase {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 }); // the data dir, when the CLI makes it first
  const db = new Database(file);
  // First, so that switching to WAL waits for a connection that opens the file at the same time.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous ?? 'NORMAL'}`);
  if (options.autoCheckpoint === false) db.pragma('wal_autocheckpoint = 0');
  if (options.walSizeLimit !== undefined) db.pragma(`journal_size_limit = ${options.walSizeLimit}`);
  migrate(db, migrations);
  return db;
}

function migrate(db: SqliteDatabase, migrations: Migrations): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > migrations.length) {
    throw new Error(`${db.name} is at schema version ${current}, newer than this Slipway knows (${migrations.length}); upgrade Slipway`);
  }
  if (current === migrations.length) return;
  // SQLite's procedure for changing a table's definition: foreign keys off (a table rebuilt
  // as a copy is dropped and renamed), then checked before the change commits.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  db.pragma('foreign_keys = OFF');
  try {
    for (let version = current; version < migrations.length; version++) {
      db.transaction(() => {
        // Another connection (another thread opening the same file) may have got there first.
        if ((db.pragma('user_version', { simple: true }) as number) > version) return;
        db.exec(migrations[version]!);
        const broken = db.pragma('foreign_key_check') as unknown[];
        if (broken.length > 0) throw new Error(`${db.name}: migration ${version + 1} would break ${broken.length} foreign keys`);
        db.pragma(`user_version = ${version + 1}`);
      }).immediate();
    }
  } finally {
    db.pragma(`foreign_keys = ${foreignKeys}`);
  }
}

/** Rows per multi-row INSERT: one statement of many rows costs a quarter less per row than one per row (measured). */
const ROWS_PER_INSERT = 32;

/**
 * `INSERT … VALUES (…), (…), …` statements for every row count up to ROWS_PER_INSERT,
 * prepared when first needed; the function returned writes `values` (row after row, flat) in
 * as few statements as it can.
 */
export function multiRowInsert(db: SqliteDatabase, head: string, columns: number) {
  const statements = new Map<number, BetterSqlite3.Statement>();
  const statement = (rows: number) => {
    let found = statements.get(rows);
    if (found === undefined) {
      const row = `(${new Array(columns).fill('?').join(', ')})`;
      found = db.prepare(`${head} VALUES ${new Array(rows).fill(row).join(', ')}`);
      statements.set(rows, found);
    }
    return found;
  };
  return (values: unknown[]): void => {
    const rows = values.length / columns;
    for (let at = 0; at < rows; at += ROWS_PER_INSERT) {
      const count = Math.min(ROWS_PER_INSERT, rows - at);
      statement(count).run(at === 0 && count === rows ? values : values.slice(at * columns, (at + count) * columns));
    }
  };
}
