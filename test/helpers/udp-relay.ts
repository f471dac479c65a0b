/**
 * A UDP relay that damages traffic on purpose, for QUIC tests: loopback never loses,
 * duplicates or reorders a datagram, so this relay does, each direction on its own, with a
 * seeded generator so that a failure replays. The client sends to the relay's port; the
 * relay forwards to the server and back to whoever spoke to it first.
 */
import dgram from 'node:dgram';

export interface Damage {
  /** Share of datagrams dropped, 0–1. */
  readonly drop: number;
  /** Share of datagrams sent twice. */
  readonly duplicate: number;
  /** Share of datagrams held back `delayMs` (so that later ones overtake them). */
  readonly reorder: number;
  readonly delayMs: number;
}

export interface UdpRelay {
  readonly port: number;
  readonly counts: { forwarded: number; dropped: number; duplicated: number; delayed: number };
  close(): Promise<void>;
}

const NONE: Damage = { drop: 0, duplicate: 0, reorder: 0, delayMs: 0 };

/** A small seeded generator (mulberry32): the same seed, the same damage. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function startUdpRelay(
  serverPort: number,
  options: { seed: number; toServer?: Damage; toClient?: Damage },
): Promise<UdpRelay> {
  const socket = dgram.createSocket('udp4');
  const random = seeded(options.seed);
  const counts = { forwarded: 0, dropped: 0, duplicated: 0, delayed: 0 };
  let client: { address: string; port: number } | undefined;
  const timers = new Set<NodeJS.Timeout>();
  const forward = (datagram: Buffer, damage: Damage, port: number, address: string) => {
    if (random() < damage.drop) {
      counts.dropped++;
      return;
    }
    const copies = random() < damage.duplicate ? 2 : 1;
    if (copies === 2) counts.duplicated++;
    for (let i = 0; i < copies; i++) {
      if (random() < damage.reorder) {
        counts.delayed++;
        const timer = setTimeout(() => {
          timers.delete(timer);
          socket.send(datagram, port, address);
        }, damage.delayMs);
        timers.add(timer);
      } else socket.send(datagram, port, address);
      counts.forwarded++;
    }
  };
  socket.on('message', (datagram, from) => {
    if (from.port === serverPort && from.address === '127.0.0.1') {
      if (client !== undefined) forward(datagram, options.toClient ?? NONE, client.port, client.address);
      return;
    }
    client ??= { address: from.address, port: from.port };
    forward(datagram, options.toServer ?? NONE, serverPort, '127.0.0.1');
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return {
    port: socket.address().port,
    counts,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      await new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
