/**
 * How a PostgreSQL key store hears of changes: it LISTENs on a connection of its own, and
 * a broken connection is opened again after a pause, reloading then too (a change made
 * while it was not listening is not missed). Apart from the store's queries, because its
 * life is the connection's, not a query's.
 */
import type pg from 'pg';

/** How long to wait before listening again after the connection broke. */
const RELISTEN_MS = 500;

/**
 * Calls `onChange` on each NOTIFY on `channel`, and once each time listening (re)starts.
 * `listeners` holds the connection while it listens (the store releases them all when it
 * closes, and `isClosed` then stops any retry). Returns the function that stops listening.
 */
export function listenForChanges(
  pool: pg.Pool,
  channel: string,
  listeners: Set<pg.PoolClient>,
  isClosed: () => boolean,
  onChange: () => void,
): () => void {
  let current: pg.PoolClient | undefined;
  let stopped = false;
  let retrying = false;
  const over = () => stopped || isClosed();
  /** Lets the connection go (once: its error and the failed query may both report one failure). */
  const drop = (client: pg.PoolClient) => {
    if (current === client) current = undefined;
    if (!listeners.delete(client)) return;
    client.release(true);
  };
  /** One retry at a time: two loops would each hold a connection, one of them for good. */
  const retry = () => {
    if (retrying || over()) return;
    retrying = true;
    setTimeout(() => {
      retrying = false;
      void listen();
    }, RELISTEN_MS).unref();
  };
  const listen = async (): Promise<void> => {
    if (over()) return;
    let client: pg.PoolClient | undefined;
    try {
      client = await pool.connect();
      // Closed while connecting: this connection must not outlive the store (the pool's end waits for it).
      if (over()) {
        client.release(true);
        return;
      }
      const mine = client;
      current = mine;
      listeners.add(mine);
      mine.on('notification', () => onChange());
      mine.on('error', () => {
        drop(mine);
        retry();
      });
      await mine.query(`LISTEN ${channel}`);
      if (over()) return; // released by the store or by stop()
      // Anything changed while not listening is picked up now.
      onChange();
    } catch {
      if (client !== undefined) drop(client);
      retry();
    }
  };
  void listen();
  return () => {
    stopped = true;
    if (current !== undefined) drop(current);
  };
}
