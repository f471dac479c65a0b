/**
 * The SQLite driver for the running Node.js: better-sqlite3 13 on Node 22 and later, built
 * on Node-API (one prebuilt binary for every runtime, nothing compiled at install), and
 * better-sqlite3 12 on Node 20, which lacks the Node-API version 13 needs; 12 is built from
 * source at install (the optional dependency `better-sqlite3-node20`).
 *
 * Why not 12 everywhere: its objects derive from node::ObjectWrap, whose destructor on Node
 * 24.19 and later aborts the process when the garbage collector frees a statement outside a
 * JavaScript context (docs/RELIABILITY.md, "Node.js 24"). Both versions have the same API.
 */
import type BetterSqlite3 from 'better-sqlite3';

/** The major versions from which Slipway uses better-sqlite3 13 (Node-API 10). */
const NODE_API_10_FROM = 22;

export const sqliteDriverPackage =
  Number(process.versions.node.split('.')[0]) >= NODE_API_10_FROM ? 'better-sqlite3' : 'better-sqlite3-node20';

function loadDriver(): typeof BetterSqlite3 {
  let driver: typeof BetterSqlite3;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- chosen at run time
    driver = require(sqliteDriverPackage) as typeof BetterSqlite3;
    // The native binary loads on first use: use it once here, so that a missing or
    // mismatched build is found at start-up with a message that says what to do.
    new driver(':memory:').close();
  } catch (error) {
    throw new Error(
      `SQLite's driver (${sqliteDriverPackage}) could not load on Node.js ${process.versions.node}: ${(error as Error).message.split('\n').slice(0, 2).join(' ')}\n` +
        (sqliteDriverPackage === 'better-sqlite3-node20'
          ? 'On Node 20 it is built from source: run `npm rebuild better-sqlite3-node20` (needs python3, make and a C++ compiler), or use Node.js 22, 24 or 26, which need no build.'
          : 'Run `npm ci` again in the Slipway folder.'),
      { cause: error },
    );
  }
  return driver;
}

const Database: typeof BetterSqlite3 = loadDriver();
export default Database;
