/**
 * The QUIC fuzz against both endpoints without I/O (client-endpoint-machine.ts,
 * server-endpoint-machine.ts): a client connects and sends transactions while datagrams in
 * flight are mutated, dropped, duplicated and replayed both ways, and other addresses throw
 * hostile datagrams at both sides (mutated copies, random bytes, Initials that decrypt and
 * carry random frames). Time moves through the endpoints' own deadlines. Besides what every
 * target checks, an address that never answered gets at most three times what it sent
 * (RFC 9000 §8.1), and no endpoint asks to be woken again and again with nothing to do.
 */
import { QuicClientConnection } from '../../../src/quic/client-connection';
import { ClientEndpointMachine } from '../../../src/quic/client-endpoint-machine';
import type { Remote } from '../../../src/quic/endpoint-machine';
import { ServerEndpointMachine } from '../../../src/quic/server-endpoint-machine';
import { initialKeys, sealLong } from '../../helpers/quic-hostile-peer';
import { randomFrames } from './frame-target';
import { mutate, type FuzzRandom } from './fuzz-random';
import { checkClose, checkDeadline, checkEvents, clientOptionsFrom, FuzzFailure, guarded, identityFrom, serverTlsFrom } from './fuzz-world';

const SERVER: Remote = { address: '10.0.0.1', port: 8009 };
const CLIENT: Remote = { address: '10.0.0.2', port: 40_000 };
const ROUNDS = 40;
/** Turns in a row an endpoint may be due with nothing to send before it counts as spinning. */
const MAX_IDLE_WAKES = 200;

export function datagramCase(random: FuzzRandom): number {
  const clock = { now: 1_000 };
  let inputs = 0;
  let last: Buffer | undefined;
  const server = new ServerEndpointMachine({
    tls: serverTlsFrom(random, identityFrom(random)),
    maxStreamBytes: 1232,
    streamWindow: () => 8,
    maxConnectionsPerIdentity: () => 2,
    retry: random.chance(0.3),
    idleTimeoutMs: 3_000,
    onTransaction: () => {},
    onConnection: (event) => checkClose('server', event.by, event.code, false, event.reason),
    maxHandshakesPerAddress: 8,
    maxConnections: 64,
    random: (length) => random.bytes(length),
  });
  const client = new ClientEndpointMachine();
  const identity = identityFrom(random);
  const connections = 1 + random.int(2);
  for (let i = 0; i < connections; i++) {
    const entry = guarded('ClientEndpointMachine.connect', undefined, () =>
      client.connect<number>(
        clock.now,
        SERVER.address,
        SERVER.port,
        { ...clientOptionsFrom(random, identity), idleTimeoutMs: 3_000 },
        (events) => {
          checkEvents('client', events);
          if (events.some((event) => event.type === 'established'))
            for (let n = random.int(4); n > 0; n--) client.send(entry, random.bytes(1 + random.int(1_232)), n);
        },
      ),
    );
  }
  const captured: Buffer[] = [];
  /** What each address that never answers sent the server, and what it got back. */
  const strangers = new Map<string, { received: number; sent: number }>();
  const toServer = (from: Remote, datagram: Buffer) => {
    inputs++;
    last = datagram;
    guarded('ServerEndpointMachine.handle', datagram, () => server.handle(clock.now, from, datagram));
  };
  const toClient = (datagram: Buffer) => {
    inputs++;
    last = datagram;
    guarded('ClientEndpointMachine.handle', datagram, () => client.handle(clock.now, SERVER, datagram));
  };
  /** A datagram in flight, as a hostile network may deliver it: as is, mutated, twice, or not at all. */
  const inFlight = (datagram: Buffer, deliver: (datagram: Buffer) => void) => {
    captured.push(datagram);
    if (captured.length > 64) captured.shift();
    if (random.chance(0.05)) return;
    deliver(random.chance(0.15) ? mutate(random, datagram) : datagram);
    if (random.chance(0.05)) deliver(datagram);
  };
  let idleWakes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let moved = false;
    for (
      let out = guarded('client pollTransmit', last, () => client.pollTransmit(clock.now));
      out !== null;
      out = client.pollTransmit(clock.now)
    ) {
      moved = true;
      inFlight(out.datagram, (datagram) => toServer(CLIENT, datagram));
    }
    for (
      let out = guarded('server pollTransmit', last, () => server.pollTransmit(clock.now));
      out !== null;
      out = server.pollTransmit(clock.now)
    ) {
      moved = true;
      const stranger = strangers.get(`${out.address}:${out.port}`);
      if (stranger !== undefined) stranger.sent += out.datagram.length;
      else if (out.address === CLIENT.address && out.port === CLIENT.port) inFlight(out.datagram, toClient);
    }
    if (random.chance(0.4)) {
      const { datagram, copied } = hostileDatagram(random, captured);
      // A copy of the client's datagram may reach the client's connection, whose allowance its
      // datagrams grow: only strangers that sent nothing of the client's are held to 3x.
      const from = { address: `10.${copied ? 8 : 9}.${random.int(4)}.${random.int(4)}`, port: 1 + random.int(3) };
      if (!copied) {
        const stranger = strangers.get(`${from.address}:${from.port}`) ?? { received: 0, sent: 0 };
        stranger.received += datagram.length;
        strangers.set(`${from.address}:${from.port}`, stranger);
      }
      toServer(from, datagram);
    }
    if (random.chance(0.2) && captured.length > 0)
      toClient(random.chance(0.5) ? mutate(random, random.pick(captured)) : random.bytes(random.int(1_300)));
    const next = Math.min(
      checkDeadline('the client endpoint', client.nextTimeout()),
      checkDeadline('the server endpoint', server.nextTimeout()),
    );
    if (!moved && next <= clock.now) {
      if (++idleWakes > MAX_IDLE_WAKES) throw new FuzzFailure(`an endpoint is due at ${next} and has nothing to send (spinning)`, last);
    } else idleWakes = 0;
    clock.now = Math.max(clock.now + 1, Math.min(next, clock.now + 400));
    guarded('client onTimeout', last, () => client.onTimeout(clock.now));
    guarded('server onTimeout', last, () => server.onTimeout(clock.now));
  }
  for (const [remote, { received, sent }] of strangers)
    if (sent > 3 * received)
      throw new FuzzFailure(`the server sent ${sent} bytes to ${remote}, which sent ${received} and never answered`, last);
  return inputs;
}

/** A datagram from a stranger: a mutated copy of one seen, a copy as is, random bytes, an Initial of its own that decrypts with random frames, or a real client's first Initial. */
function hostileDatagram(random: FuzzRandom, captured: readonly Buffer[]): { datagram: Buffer; copied: boolean } {
  const kind = random.int(5);
  if (kind === 4) {
    // A genuine first Initial from a client that never answers: the server's whole flight is at stake.
    const stranger = new QuicClientConnection<number>({ now: 0, ...clientOptionsFrom(random, identityFrom(random)) });
    return { datagram: stranger.poll(0)!, copied: false };
  }
  if (kind === 0 && captured.length > 0) return { datagram: mutate(random, random.pick(captured)), copied: true };
  if (kind === 1 && captured.length > 0) return { datagram: random.pick(captured), copied: true };
  if (kind === 2) return { datagram: random.bytes(random.int(1_500)), copied: false };
  const dcid = random.bytes(8 + random.int(13));
  const datagram = sealLong({
    type: 'initial',
    keys: initialKeys(dcid).client,
    dcid,
    scid: random.bytes(random.int(21)),
    token: random.chance(0.2) ? random.bytes(random.int(80)) : undefined,
    packetNumber: random.int(4),
    payload: randomFrames(random),
    padTo: random.chance(0.9) ? 1200 : 0,
  });
  return { datagram, copied: false };
}
