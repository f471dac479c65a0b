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
  const listen = async (): Promise<void> => {
    if (stopped || isClosed()) return;
    try {
      const client = await pool.connect();
      current = client;
      listeners.add(client);
      client.on('notification', () => onChange());
      client.on('error', () => {
        listeners.delete(client);
        client.release(true);
        current = undefined;
        setTimeout(() => void listen(), RELISTEN_MS).unref();
      });
      await client.query(`LISTEN ${channel}`);
      // Anything changed while not listening is picked up now.
      onChange();
    } catch {
      setTimeout(() => void listen(), RELISTEN_MS).unref();
    }
  };
  void listen();
  return () => {
    stopped = true;
    if (current !== undefined) {
      listeners.delete(current);
      current.release(true);
      current = undefined;
    }
  };
}
