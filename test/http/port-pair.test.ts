/**
 * `port: 0` picks a port whose port + 1 is free too (http/port-pair.ts): a system-picked port
 * with its neighbour taken is passed over, and the gateway started on port 0 serves
 * subscriptions on port + 1.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, it } from 'node:test';
import WebSocket from 'ws';
import { freePortPair, probePort, type PortProbe } from '../../src/http/port-pair';
import { startTestGateway } from '../helpers/gateway';

describe('a port and its neighbour', () => {
  it('passes over a system-picked port whose port + 1 is taken', async () => {
    // The first port the system offers gets its neighbour taken by the test, as an outgoing connection would.
    const taken: net.Server[] = [];
    let offered = 0;
    const probe: PortProbe = async (host, port) => {
      const got = await probePort(host, port);
      if (port === 0 && got !== undefined && offered++ === 0) {
        const blocker = net.createServer();
        await new Promise<void>((resolve, reject) => {
          blocker.once('error', reject);
          blocker.listen(got.port + 1, host, () => resolve());
        }).catch(() => {});
        taken.push(blocker);
      }
      return got;
    };
    try {
      const port = await freePortPair('127.0.0.1', probe);
      assert.ok(offered >= 2, 'a second port was asked for');
      assert.notEqual(port + 1, (taken[0]!.address() as net.AddressInfo | null)?.port, 'not the pair whose neighbour is taken');
      for (const p of [port, port + 1]) {
        const check = await probePort('127.0.0.1', p);
        assert.ok(check !== undefined, `port ${p} is free`);
        await check.release();
      }
    } finally {
      taken.forEach((server) => server.close());
    }
  });

  it('a gateway on port 0 serves subscriptions on port + 1', async () => {
    const gw = await startTestGateway();
    try {
      const port = Number(new URL(gw.url).port);
      const socket = new WebSocket(`ws://127.0.0.1:${port + 1}/?api-key=${gw.key}`);
      const answer = await new Promise<string>((resolve, reject) => {
        socket.once('error', reject);
        socket.once('open', () => socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' })));
        socket.once('message', (data) => resolve(String(data)));
      });
      assert.equal(typeof JSON.parse(answer).result, 'number');
      socket.close();
    } finally {
      await gw.close();
    }
  });
});
