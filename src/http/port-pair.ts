/**
 * A free port whose next port is free too, for `port: 0`. The gateway serves WebSocket
 * subscriptions on port + 1, where Solana clients look by default; a port picked by the
 * system alone often has port + 1 taken, since Linux hands out odd ports to listeners and
 * even ones to outgoing connections (on a busy machine the next port is someone's
 * connection). Both are tried, released, and the pair handed to the listeners.
 */
import net from 'node:net';

/** Tries this many system-picked ports before settling for one without its neighbour. */
const PAIR_ATTEMPTS = 32;

/** Listens on `port` (0: any) and resolves the port it got, or undefined if it was taken. */
export type PortProbe = (host: string, port: number) => Promise<{ port: number; release(): Promise<void> } | undefined>;

export const probePort: PortProbe = (host, port) =>
  new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, host, () => {
      const address = server.address();
      const got = typeof address === 'object' && address !== null ? address.port : port;
      resolve({ port: got, release: () => new Promise<void>((done) => server.close(() => done())) });
    });
  });

/** A port P with P + 1 free as well (or, after PAIR_ATTEMPTS tries, any free port: the main port serves subscriptions too). */
export async function freePortPair(host: string, probe: PortProbe = probePort): Promise<number> {
  let last = 0;
  for (let attempt = 0; attempt < PAIR_ATTEMPTS; attempt++) {
    const main = await probe(host, 0);
    if (main === undefined) continue;
    last = main.port;
    const beside = main.port < 65_535 ? await probe(host, main.port + 1) : undefined;
    await beside?.release();
    await main.release();
    if (beside !== undefined) return main.port;
  }
  return last;
}
