/**
 * The QUIC endpoints without sockets (server-endpoint-machine.ts, client-endpoint-machine.ts,
 * retry-tokens.ts, endpoint-machine.ts's transmit queue): routing by connection ID, who may start a connection, Retry judged at
 * the time the endpoint is given, and the limits per address, per identity and in all. The
 * two endpoints talk through test/quic/endpoint-network.ts, on a clock the test moves.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { ConnectionEvent } from '../../src/quic/connection';
import { TransmitQueue, type Transmit } from '../../src/quic/endpoint-machine';
import { splitDatagram } from '../../src/quic/packets';
import { RetryTokens, TOKEN_LIFETIME_MS } from '../../src/quic/retry-tokens';
import { TOO_MANY_CONNECTIONS_CODE } from '../../src/quic/server-endpoint-machine';
import { clientTls, generateIdentity, type TlsIdentity } from '../../src/quic/tpu-handshakes';
import { closeOf, frames, freshClient, initialKeys, sealLong, sealShort } from '../helpers/quic-hostile-peer';
import { CLIENT, endpointNetwork, SERVER, type EndpointNetwork } from './endpoint-network';

const serverIdentity = generateIdentity();

function connect(network: EndpointNetwork, identity: TlsIdentity = generateIdentity()) {
  const events: ConnectionEvent<number>[] = [];
  const entry = network.client.connect<number>(network.clock.now, SERVER.address, SERVER.port, { tls: clientTls(identity) }, (more) =>
    events.push(...more),
  );
  return { entry, events };
}

/** An Initial that decrypts, `size` bytes long, whose CRYPTO data is the start of a ClientHello and no more (the server waits for the rest). */
function partialInitial(size: number, token?: Buffer, dcid: Buffer = randomBytes(8)): Buffer {
  return sealLong({
    type: 'initial',
    keys: initialKeys(dcid).client,
    dcid,
    scid: randomBytes(8),
    token,
    packetNumber: 0,
    payload: frames.crypto(0, Buffer.of(1, 0, 1, 0)),
    padTo: size,
  });
}

/** The Retry the server queued last, with its token and the connection ID the client must address next. */
function lastRetry(network: EndpointNetwork): { token: Buffer; scid: Buffer; to: string } {
  const sent = network.server.pollTransmit(network.clock.now);
  assert.ok(sent !== null, 'no Retry was sent');
  const [packet] = splitDatagram(sent.datagram, 8);
  assert.equal(packet?.type, 'retry');
  const retry = packet as Extract<typeof packet, { type: 'retry' }>;
  return { token: Buffer.from(retry.token), scid: Buffer.from(retry.scid), to: `${sent.address}:${sent.port}` };
}

describe('the QUIC server endpoint without sockets', () => {
  it('routes a handshake and two transactions by connection ID: both reach onTransaction, with the client identity', () => {
    const network = endpointNetwork(serverIdentity);
    const identity = generateIdentity();
    const { entry, events } = connect(network, identity);
    network.pump();
    assert.ok(events.some((event) => event.type === 'established'));
    network.client.send(entry, Buffer.from('one'), 1);
    network.client.send(entry, Buffer.from('two'), 2);
    network.pump();
    assert.deepEqual(
      network.received.map((r) => r.data.toString()),
      ['one', 'two'],
    );
    assert.ok(network.received.every((r) => r.identity?.equals(identity.publicKey) && r.remote === `${CLIENT.address}:${CLIENT.port}`));
  });

  it('drops a datagram for a connection ID nobody has: nothing created, nothing sent, the connection it resembles untouched', () => {
    const network = endpointNetwork(serverIdentity);
    const { entry, events } = connect(network);
    network.pump();
    const { server, clock } = network;
    const sentBefore = network.serverSent.length;
    // A 1-RTT packet to an unknown ID, a Handshake packet to an unknown ID (1,200 bytes), an empty datagram.
    server.handle(clock.now, CLIENT, sealShort(initialKeys(randomBytes(8)).client, randomBytes(8), 5, frames.ping()));
    server.handle(clock.now, CLIENT, Buffer.concat([Buffer.of(0xe0, 0, 0, 0, 1, 8), randomBytes(8), Buffer.of(8), randomBytes(1_200)]));
    server.handle(clock.now, CLIENT, Buffer.alloc(0));
    assert.equal(server.pollTransmit(clock.now), null);
    assert.equal(server.connectionCount, 1);
    assert.equal(network.serverSent.length, sentBefore);
    network.client.send(entry, Buffer.from('still'), 1);
    network.pump();
    assert.deepEqual(
      network.received.map((r) => r.data.toString()),
      ['still'],
    );
    assert.equal(closeOf(events), undefined);
  });

  it('starts a connection only from a client Initial of at least 1,200 bytes that decrypts', () => {
    const network = endpointNetwork(serverIdentity);
    const { server, clock } = network;
    server.handle(clock.now, CLIENT, partialInitial(1_199));
    assert.equal(server.connectionCount, 0, 'a 1,199-byte Initial made a connection');
    const undecryptable = partialInitial(1_200);
    undecryptable[undecryptable.length - 1]! ^= 1;
    server.handle(clock.now, CLIENT, undecryptable);
    assert.equal(server.connectionCount, 0, 'an Initial that does not decrypt made a connection');
    assert.equal(server.pollTransmit(clock.now), null);
    server.handle(clock.now, CLIENT, partialInitial(1_200));
    assert.equal(server.connectionCount, 1);
  });

  it('limits connections in the handshake per address (more Initials dropped), and in all', () => {
    const network = endpointNetwork(serverIdentity, { maxHandshakesPerAddress: 3, maxConnections: 5 });
    const { server, clock } = network;
    for (let i = 0; i < 5; i++) server.handle(clock.now, CLIENT, freshClient().first);
    assert.equal(server.connectionCount, 3);
    server.handle(clock.now, { address: '10.0.0.3', port: 1 }, freshClient().first);
    server.handle(clock.now, { address: '10.0.0.4', port: 1 }, freshClient().first);
    server.handle(clock.now, { address: '10.0.0.5', port: 1 }, freshClient().first);
    assert.equal(server.connectionCount, 5);
  });

  it('closes a connection past the per-identity limit with code 4; the first one keeps serving', () => {
    const network = endpointNetwork(serverIdentity, { maxConnectionsPerIdentity: () => 1 });
    const identity = generateIdentity();
    const first = connect(network, identity);
    network.pump();
    const second = connect(network, identity);
    network.pump();
    const close = closeOf(second.events);
    assert.deepEqual([close?.by, close?.code, close?.application], ['peer', TOO_MANY_CONNECTIONS_CODE, true]);
    network.client.send(first.entry, Buffer.from('first'), 1);
    network.pump();
    assert.deepEqual(
      network.received.map((r) => r.data.toString()),
      ['first'],
    );
  });
});

describe('Retry in the server endpoint, at the time it is given', () => {
  it('a client that follows the Retry connects, and its transactions arrive', () => {
    const network = endpointNetwork(serverIdentity, { retry: true });
    const { entry, events } = connect(network);
    network.pump();
    assert.ok(events.some((event) => event.type === 'established'));
    assert.equal(splitDatagram(network.serverSent[0]!.datagram, 8)[0]?.type, 'retry');
    network.client.send(entry, Buffer.from('after retry'), 1);
    network.pump();
    assert.equal(network.received[0]?.data.toString(), 'after retry');
  });

  it('an Initial without a token gets a Retry and leaves no state; its token opens once, from its address, until it expires', () => {
    const network = endpointNetwork(serverIdentity, { retry: true });
    const { server, clock } = network;
    const retries = Array.from({ length: 4 }, () => {
      server.handle(clock.now, CLIENT, partialInitial(1_200));
      return lastRetry(network);
    });
    assert.equal(server.connectionCount, 0);
    assert.ok(retries.every((retry) => retry.to === `${CLIENT.address}:${CLIENT.port}`));
    const [otherPort, forged, expired, good] = retries as [
      (typeof retries)[0],
      (typeof retries)[0],
      (typeof retries)[0],
      (typeof retries)[0],
    ];
    server.handle(
      clock.now + 1,
      { address: CLIENT.address, port: CLIENT.port + 1 },
      partialInitial(1_200, otherPort.token, otherPort.scid),
    );
    const altered = Buffer.from(forged.token);
    altered[14]! ^= 1;
    server.handle(clock.now + 1, CLIENT, partialInitial(1_200, altered, forged.scid));
    server.handle(clock.now + TOKEN_LIFETIME_MS + 1, CLIENT, partialInitial(1_200, expired.token, expired.scid));
    assert.equal(server.connectionCount, 0, 'a token from another port, altered or expired opened');
    assert.equal(server.pollTransmit(clock.now), null, 'a refused token was answered');
    server.handle(clock.now + TOKEN_LIFETIME_MS - 1, CLIENT, partialInitial(1_200, good.token, good.scid));
    assert.equal(server.connectionCount, 1);
  });

  it('RetryTokens: sealed and opened at the times given (not the wall clock), for one address only', () => {
    const tokens = new RetryTokens();
    const original = randomBytes(12);
    // A time far from the wall clock's: only the times given count.
    const token = tokens.seal(original, CLIENT, 5);
    assert.deepEqual(tokens.open(token, CLIENT, 5), original);
    assert.deepEqual(tokens.open(token, CLIENT, 5 + TOKEN_LIFETIME_MS), original);
    assert.equal(tokens.open(token, CLIENT, 5 + TOKEN_LIFETIME_MS + 1), null, 'expired');
    assert.equal(tokens.open(token, CLIENT, 4), null, 'from the future');
    assert.equal(tokens.open(token, { address: CLIENT.address, port: CLIENT.port + 1 }, 5), null, 'another port');
    assert.equal(tokens.open(token, { address: '10.9.9.9', port: CLIENT.port }, 5), null, 'another address');
    assert.equal(new RetryTokens().open(token, CLIENT, 5), null, "another endpoint's key");
    assert.equal(tokens.open(token.subarray(0, 20), CLIENT, 5), null, 'cut short');
  });
});

describe('the transmit queue both endpoints hand out datagrams from', () => {
  const datagram = (name: string): Transmit => ({ address: name, port: 1, datagram: Buffer.from(name) });

  it('drives every connection touched since the last poll, each once, and hands out what they queued in order', () => {
    const driven: string[] = [];
    const queue: TransmitQueue<string> = new TransmitQueue<string>((connection) => {
      driven.push(connection);
      queue.push(datagram(`${connection}-1`));
      queue.push(datagram(`${connection}-2`));
    });
    queue.touch('a');
    queue.touch('b');
    queue.touch('a');
    const out: string[] = [];
    for (let t = queue.poll(0); t !== null; t = queue.poll(0)) out.push(t.address);
    assert.deepEqual(driven, ['a', 'b']);
    assert.deepEqual(out, ['a-1', 'a-2', 'b-1', 'b-2']);
    assert.equal(queue.poll(0), null);
  });

  it("drives in the same poll a connection that another's events touched, when nothing was queued yet", () => {
    const queue: TransmitQueue<string> = new TransmitQueue<string>((connection) => {
      if (connection === 'quiet')
        queue.touch('other'); // its events sent a transaction again elsewhere
      else queue.push(datagram(connection));
    });
    queue.touch('quiet');
    assert.equal(queue.poll(5)?.address, 'other');
    assert.equal(queue.poll(5), null);
  });

  it('passes each drive the time of the poll', () => {
    const times: number[] = [];
    const queue = new TransmitQueue<string>((_connection, now) => times.push(now));
    queue.touch('a');
    queue.poll(42);
    assert.deepEqual(times, [42]);
  });
});
