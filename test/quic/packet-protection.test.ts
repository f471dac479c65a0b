/**
 * Packet protection and headers against RFC 9001 Appendix A, byte for byte: the Initial
 * secrets and keys, the client's and server's Initial packets sealed and opened, the Retry
 * integrity tag, and a 1-RTT packet; packet numbers and varints against RFC 9000's examples.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodePacketNumber, initialSecrets, PacketKeys, retryIntegrityTag, unprotectHeader } from '../../src/quic/packet-protection';
import { splitDatagram } from '../../src/quic/packets';
import { encodeVarint, Reader } from '../../src/quic/wire';
import { CLIENT_DCID, CLIENT_INITIAL, RETRY, SERVER_INITIAL, SHORT_SERVER } from './rfc9001-vectors';

const hex = (text: string) => Buffer.from(text, 'hex');

describe('QUIC packet protection (RFC 9001 Appendix A)', () => {
  const secrets = initialSecrets(CLIENT_DCID);
  const client = new PacketKeys(secrets.client);
  const server = new PacketKeys(secrets.server);

  it('derives the Initial secrets, keys, IVs and header protection keys', () => {
    assert.equal(secrets.client.toString('hex'), 'c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea');
    assert.equal(secrets.server.toString('hex'), '3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b');
    assert.equal(client.key.toString('hex'), '1f369613dd76d5467730efcbe3b1a22d');
    assert.equal(client.iv.toString('hex'), 'fa044b2f42a3fd3b46fb255c');
    assert.equal(client.hp.toString('hex'), '9f50449e04a0e810283a1e9933adedd2');
    assert.equal(server.key.toString('hex'), 'cf3a5331653c364c88f0f379b6067e37');
    assert.equal(server.iv.toString('hex'), '0ac1493ca1905853b0bba03e');
    assert.equal(server.hp.toString('hex'), 'c206b8d9b9f0f37644430b490eeaa314');
  });

  for (const [name, sample, keys, cidLength] of [
    ["the client's Initial (A.2)", CLIENT_INITIAL, client, 8],
    ["the server's Initial (A.3)", SERVER_INITIAL, server, 0],
  ] as const) {
    it(`seals ${name} to the RFC's bytes`, () => {
      const pnLength = (sample.header[0]! & 0x03) + 1;
      const pnOffset = sample.header.length - pnLength;
      assert.deepEqual(keys.seal(sample.header, pnOffset, pnLength, sample.packetNumber, sample.payload), sample.protected);
    });

    it(`opens ${name}: header, packet number and payload`, () => {
      const [packet] = splitDatagram(sample.protected, cidLength);
      assert.ok(packet !== undefined && packet.type === 'initial');
      const unprotected = unprotectHeader(keys, packet.packet, packet.pnOffset);
      assert.ok(unprotected !== null);
      assert.deepEqual(unprotected.header, sample.header);
      const packetNumber = decodePacketNumber(-1, unprotected.truncated, unprotected.pnLength);
      assert.equal(packetNumber, sample.packetNumber);
      const payload = keys.open(unprotected.header, packet.packet.subarray(unprotected.header.length), packetNumber);
      assert.deepEqual(payload, sample.payload);
    });
  }

  it("refuses a packet with one bit changed, and one opened with the other direction's keys", () => {
    const [packet] = splitDatagram(CLIENT_INITIAL.protected, 8);
    assert.ok(packet !== undefined && packet.type === 'initial');
    const unprotected = unprotectHeader(client, packet.packet, packet.pnOffset)!;
    const sealed = Buffer.from(packet.packet.subarray(unprotected.header.length));
    sealed[100]! ^= 1;
    assert.equal(client.open(unprotected.header, sealed, 2), null);
    assert.equal(server.open(unprotected.header, packet.packet.subarray(unprotected.header.length), 2), null);
  });

  it("computes the Retry integrity tag of A.4, and the Retry packet's token", () => {
    assert.deepEqual(retryIntegrityTag(CLIENT_DCID, RETRY.subarray(0, RETRY.length - 16)), RETRY.subarray(RETRY.length - 16));
    const [retry] = splitDatagram(RETRY, 0);
    assert.ok(retry !== undefined && retry.type === 'retry');
    assert.equal(retry.token.toString(), 'token');
    assert.equal(retry.scid.toString('hex'), 'f067a5502a4262b5');
  });

  it('seals and opens a 1-RTT packet', () => {
    const keys = new PacketKeys(SHORT_SERVER.secret);
    assert.deepEqual(keys.seal(SHORT_SERVER.header, 9, 2, SHORT_SERVER.packetNumber, SHORT_SERVER.payload), SHORT_SERVER.protected);
    const [packet] = splitDatagram(SHORT_SERVER.protected, 8);
    assert.ok(packet !== undefined && packet.type === 'one-rtt');
    const unprotected = unprotectHeader(keys, packet.packet, packet.pnOffset)!;
    assert.deepEqual(unprotected.header, SHORT_SERVER.header);
    assert.deepEqual(keys.open(unprotected.header, packet.packet.subarray(unprotected.header.length), 3), SHORT_SERVER.payload);
  });

  it('decodes packet numbers (RFC 9000 Appendix A.3) and varints (Appendix A.1)', () => {
    assert.equal(decodePacketNumber(0xa82f30ea, 0x9b32, 2), 0xa82f9b32);
    assert.equal(decodePacketNumber(255, 0, 1), 256);
    assert.equal(decodePacketNumber(300, 0xff, 1), 255);
    for (const [bytes, value] of [
      ['c2197c5eff14e88c', Number(151_288_809_941_952_652n)],
      ['9d7f3e7d', 494_878_333],
      ['7bbd', 15_293],
      ['25', 37],
      ['4025', 37],
    ] as const) {
      assert.equal(new Reader(hex(bytes)).varint(), value);
    }
    for (const value of [0, 63, 64, 16_383, 16_384, 1_073_741_823, 1_073_741_824, 2 ** 53]) {
      assert.equal(new Reader(encodeVarint(value)).varint(), value);
    }
  });

  it('splits coalesced packets and stops at a truncated one without throwing', () => {
    const both = Buffer.concat([SERVER_INITIAL.protected, SERVER_INITIAL.protected]);
    assert.equal(splitDatagram(both, 0).length, 2);
    assert.equal(splitDatagram(both.subarray(0, both.length - 1), 0).length, 1);
    for (let cut = 0; cut < 60; cut++) splitDatagram(CLIENT_INITIAL.protected.subarray(0, cut), 8);
  });
});
