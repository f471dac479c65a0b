/**
 * Slipway's QUIC client and server over real UDP sockets on loopback: transactions land
 * whole and once, with the client's identity; Retry; a relay that drops, duplicates and
 * reorders datagrams; Agave's limits (an empty stream closes the connection with code 5;
 * an over-long one cannot be sent within the stream window, receive-streams tests it), no credit means no stream, too many connections per identity: code 4); a
 * stalled server; a wrong ALPN; and hostile datagrams that must not harm the server.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import dgram from 'node:dgram';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import type { ConnectionEvent } from '../../src/quic/connection';
import { QuicServerEndpoint, type ServerEndpointOptions } from '../../src/quic/server-endpoint';
import { clientTls, generateIdentity, serverTls, type TlsIdentity } from '../../src/quic/tpu-handshakes';
import { QuicClientEndpoint, type EndpointConnection } from '../../src/quic/udp-endpoint';
import { startUdpRelay, type UdpRelay } from '../helpers/udp-relay';

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

interface Received {
  readonly data: Buffer;
  readonly identity: Buffer | undefined;
}

const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

async function server(options: Partial<ServerEndpointOptions> = {}) {
  const identity = generateIdentity();
  const received: Received[] = [];
  const connections: { state: string; code?: number; identity?: Buffer }[] = [];
  const endpoint = await QuicServerEndpoint.open({
    host: '127.0.0.1',
    port: 0,
    tls: serverTls(identity),
    maxStreamBytes: 1232,
    streamWindow: () => 128,
    maxConnectionsPerIdentity: () => 8,
    retry: false,
    idleTimeoutMs: 5_000,
    onTransaction: (data, sender) => received.push({ data, identity: sender }),
    onConnection: (event) => connections.push({ state: event.state, code: event.code, identity: event.identity }),
    ...options,
  });
  closers.push(() => endpoint.close());
  return { endpoint, received, connections };
}

async function client() {
  const endpoint = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
  closers.push(() => endpoint.close());
  return endpoint;
}

/** Connects and collects the connection's events; `done` resolves at the first event `until` accepts. */
function connect(endpoint: QuicClientEndpoint, port: number, identity: TlsIdentity, alpn?: string) {
  const events: ConnectionEvent<number>[] = [];
  const waiters: { until: (event: ConnectionEvent<number>, all: ConnectionEvent<number>[]) => boolean; resolve: () => void }[] = [];
  const entry: EndpointConnection<number> = endpoint.connect<number>(
    '127.0.0.1',
    port,
    { tls: clientTls(identity, alpn), idleTimeoutMs: 3_000 },
    (batch) => {
      events.push(...batch);
      for (const event of batch)
        for (const waiter of [...waiters])
          if (waiter.until(event, events)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve();
          }
    },
  );
  const waitFor = (until: (event: ConnectionEvent<number>, all: ConnectionEvent<number>[]) => boolean, timeoutMs = 10_000) =>
    new Promise<void>((resolve, reject) => {
      if (events.some((event) => until(event, events))) return resolve();
      const timer = setTimeout(() => reject(new Error(`timed out; events: ${events.map((event) => event.type).join(', ')}`)), timeoutMs);
      waiters.push({ until, resolve: () => (clearTimeout(timer), resolve()) });
    });
  return { entry, events, waitFor };
}

const delivered = (count: number) => (_event: ConnectionEvent<number>, all: ConnectionEvent<number>[]) =>
  all.filter((event) => event.type === 'delivered').length >= count;
const closed = (event: ConnectionEvent<number>) => event.type === 'closed';

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('QUIC over UDP sockets', () => {
  it('lands 300 transactions whole and once, each reported delivered, with the client identity on the server side', async () => {
    const { endpoint: serving, received } = await server();
    const sending = await client();
    const identity = generateIdentity();
    const { entry, events, waitFor } = connect(sending, serving.port, identity);
    const txs = Array.from({ length: 300 }, (_, i) => Buffer.concat([Buffer.from([i & 0xff, i >> 8]), randomBytes(1230)]));
    for (const [i, tx] of txs.entries()) assert.equal(sending.send(entry, tx, i), true);
    await waitFor(delivered(300));
    assert.deepEqual(
      events
        .filter((event) => event.type === 'delivered')
        .map((event) => (event as { tag: number }).tag)
        .sort((a, b) => a - b),
      [...txs.keys()],
    );
    await until(() => received.length >= 300);
    assert.deepEqual(received.map((entry) => sha(entry.data)).sort(), txs.map(sha).sort());
    for (const entry of received) assert.deepEqual(entry.identity, identity.publicKey);
    assert.equal(events[0]!.type, 'established');
  });

  it('follows a Retry and lands through it', async () => {
    const { endpoint: serving, received } = await server({ retry: true });
    const sending = await client();
    const { entry, waitFor } = connect(sending, serving.port, generateIdentity());
    for (let i = 0; i < 20; i++) sending.send(entry, randomBytes(1232), i);
    await waitFor(delivered(20));
    await until(() => received.length === 20);
  });

  for (const [name, seed, damage] of [
    ['drops 10% each way', 1, { drop: 0.1, duplicate: 0, reorder: 0, delayMs: 0 }],
    ['duplicates 20% each way', 2, { drop: 0, duplicate: 0.2, reorder: 0, delayMs: 0 }],
    ['reorders 20% each way (5 ms late)', 3, { drop: 0, duplicate: 0, reorder: 0.2, delayMs: 5 }],
    ['does all three at once', 4, { drop: 0.05, duplicate: 0.1, reorder: 0.1, delayMs: 3 }],
  ] as const) {
    it(`delivers every transaction exactly once through a relay that ${name}`, async () => {
      const { endpoint: serving, received } = await server({ retry: seed === 4 });
      const relay: UdpRelay = await startUdpRelay(serving.port, { seed, toServer: damage, toClient: damage });
      closers.push(() => relay.close());
      const sending = await client();
      const { entry, waitFor } = connect(sending, relay.port, generateIdentity());
      const txs = Array.from({ length: 200 }, () => randomBytes(1232));
      for (const [i, tx] of txs.entries()) sending.send(entry, tx, i);
      await waitFor(delivered(200), 20_000);
      await until(() => received.length >= 200);
      // Once each: a duplicated datagram or a retransmission never makes a second transaction.
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(received.length, 200);
      assert.deepEqual(received.map((entry) => sha(entry.data)).sort(), txs.map(sha).sort());
      assert.ok(relay.counts.dropped + relay.counts.duplicated + relay.counts.delayed > 0, JSON.stringify(relay.counts));
    });
  }

  it('an empty stream closes the connection with code 5 (invalid stream), as Agave does', async () => {
    for (const bad of [Buffer.alloc(0)]) {
      const { endpoint: serving, received } = await server();
      const sending = await client();
      const { entry, events, waitFor } = connect(sending, serving.port, generateIdentity());
      sending.send(entry, randomBytes(100), 0);
      await waitFor(delivered(1));
      sending.send(entry, bad, 1);
      await waitFor(closed);
      const close = events.find((event) => event.type === 'closed') as Extract<ConnectionEvent<number>, { type: 'closed' }>;
      assert.deepEqual([close.by, close.application, close.code], ['peer', true, 5]);
      assert.deepEqual(close.undelivered, [1]);
      assert.equal(received.length, 1);
    }
  });

  it('opens no stream while the server gives no credit, keeps the connection, and reports the transaction undelivered at close', async () => {
    const { endpoint: serving, received } = await server({ streamWindow: () => 0 });
    const sending = await client();
    const { entry, events, waitFor } = connect(sending, serving.port, generateIdentity());
    await waitFor((event) => event.type === 'established');
    sending.send(entry, randomBytes(1232), 7);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(received.length, 0);
    assert.equal(entry.connection.state, 'established');
    assert.equal(entry.connection.streams.waitingCount, 1);
    sending.closeConnection(entry);
    await waitFor(closed);
    const close = events.find((event) => event.type === 'closed') as Extract<ConnectionEvent<number>, { type: 'closed' }>;
    assert.deepEqual(close.undelivered, [7]);
  });

  it('closes the connections of one identity past the limit with code 4; another identity still connects', async () => {
    const { endpoint: serving } = await server({ maxConnectionsPerIdentity: () => 2 });
    const sending = await client();
    const identity = generateIdentity();
    const three = [0, 1, 2].map(() => connect(sending, serving.port, identity));
    await Promise.all(three.map((connection) => connection.waitFor((event) => event.type === 'established')));
    await three[2]!.waitFor(closed);
    const close = three[2]!.events.find((event) => event.type === 'closed') as Extract<ConnectionEvent<number>, { type: 'closed' }>;
    assert.deepEqual([close.by, close.code], ['peer', 4]);
    const other = connect(sending, serving.port, generateIdentity());
    other.entry.connection.send(randomBytes(10), 1);
    sending.send(other.entry, randomBytes(10), 2);
    await other.waitFor(delivered(1));
  });

  it('refuses another ALPN in the handshake (TLS no_application_protocol, CRYPTO_ERROR 0x178)', async () => {
    const { endpoint: serving, received } = await server();
    const sending = await client();
    const { events, waitFor } = connect(sending, serving.port, generateIdentity(), 'h3');
    await waitFor(closed);
    const close = events.find((event) => event.type === 'closed') as Extract<ConnectionEvent<number>, { type: 'closed' }>;
    assert.deepEqual([close.by, close.code], ['peer', 0x178]);
    assert.equal(received.length, 0);
  });

  it('a stalled server: nothing is delivered, the client gives up after its idle time-out and reports what it held', async () => {
    const { endpoint: serving } = await server();
    const sending = await client();
    const { entry, events, waitFor } = connect(sending, serving.port, generateIdentity());
    await waitFor((event) => event.type === 'established');
    serving.stalled = true;
    sending.send(entry, randomBytes(1232), 3);
    await waitFor(closed, 15_000);
    const close = events.find((event) => event.type === 'closed') as Extract<ConnectionEvent<number>, { type: 'closed' }>;
    assert.equal(close.by, 'idle');
    assert.deepEqual(close.undelivered, [3]);
  });

  it('takes hostile datagrams (random bytes, Initials cut short or with bits flipped, huge connection IDs) without harm, and serves a client after them', async () => {
    const { endpoint: serving, received } = await server({ retry: false });
    const socket = dgram.createSocket('udp4');
    closers.push(() => new Promise((resolve) => socket.close(() => resolve())));
    // A real client Initial to mutate: the first datagram our client sends.
    const capture = dgram.createSocket('udp4');
    const initial = await new Promise<Buffer>((resolve) => {
      capture.once('message', (datagram) => resolve(datagram));
      capture.bind(0, '127.0.0.1', async () => {
        const probe = await client();
        connect(probe, capture.address().port, generateIdentity());
      });
    });
    capture.close();
    const hostile = fc.sample(
      fc.oneof(
        fc.uint8Array({ minLength: 0, maxLength: 1500 }).map((bytes) => Buffer.from(bytes)),
        fc.integer({ min: 0, max: initial.length }).map((cut) => initial.subarray(0, cut)),
        fc.tuple(fc.integer({ min: 0, max: initial.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, bits]) => {
          const copy = Buffer.from(initial);
          copy[at]! ^= bits;
          return copy;
        }),
        fc.constant(Buffer.concat([Buffer.from([0xc3, 0, 0, 0, 1, 255]), randomBytes(1300)])),
      ),
      { seed: 11, numRuns: 3_000 },
    );
    for (const datagram of hostile) socket.send(datagram, serving.port, '127.0.0.1');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sending = await client();
    const { entry, waitFor } = connect(sending, serving.port, generateIdentity());
    sending.send(entry, randomBytes(500), 1);
    await waitFor(delivered(1));
    await until(() => received.length === 1);
  });
});
