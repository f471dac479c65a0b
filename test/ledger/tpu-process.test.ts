/**
 * `bin/slipway ledger` as a user runs it, with its TPUs: getClusterNodes lists a QUIC port
 * per validator; `--stakes` and `--tpu-fault` apply from the start; random datagrams at
 * every TPU port do not end the process, which then lands a transfer sent through its TPUs;
 * a bad stakes file or fault stops start-up naming it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { after, describe, it } from 'node:test';
import { Connection, Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import fc from 'fast-check';
import { defaultValidatorIdentities } from '../../src/core/validator-identities';
import { generateIdentity } from '../../src/quic/tpu-handshakes';
import { QuicClientEndpoint } from '../../src/quic/udp-endpoint';
import { makeDataDir } from '../helpers/gateway';
import { runCli, SLIPWAY } from '../helpers/process';
import { post } from '../helpers/rpc';
import { balanceOf, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';
import { closed, connectTpu, delivered, established, until } from '../helpers/tpu-cluster';

const dirs: string[] = [];
const children: ChildProcess[] = [];
after(() => {
  children.forEach((child) => child.kill('SIGKILL'));
  dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true }));
});

async function startLedger(args: string[]): Promise<{ child: ChildProcess; url: string; exited: Promise<number | null> }> {
  const dir = makeDataDir();
  dirs.push(dir);
  const child = spawn(SLIPWAY, ['ledger', '--port', '0', '--data-dir', dir, '--slot-ms', '50', '--log-level', 'warn', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code}`)));
  });
  return { child, url, exited };
}

describe('bin/slipway ledger with its TPUs', () => {
  it('lists a QUIC port per validator, applies --stakes and --tpu-fault from the start, survives random datagrams, and lands through its TPUs', async () => {
    const validators = defaultValidatorIdentities();
    const staked = generateIdentity();
    const stakesFile = path.join(makeDataDir(), 'stakes.json');
    dirs.push(path.dirname(stakesFile));
    fs.writeFileSync(stakesFile, JSON.stringify({ [bs58.encode(staked.publicKey)]: 5_000_000_000 }));
    const refusing = validators[0]!;
    const { child, url, exited } = await startLedger(['--stakes', stakesFile, '--tpu-fault', `refuse@${refusing}`]);
    const client = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
    try {
      const nodes = (await post(url, { jsonrpc: '2.0', id: 1, method: 'getClusterNodes' })).body.result as {
        pubkey: string;
        tpuQuic: string;
        rpc: string | null;
      }[];
      assert.deepEqual(
        nodes.map((node) => node.pubkey),
        validators,
      );
      assert.equal(nodes[0]!.rpc, url.replace('http://', ''));
      const ports = new Map(nodes.map((node) => [node.pubkey, Number(/^127\.0\.0\.1:(\d+)$/.exec(node.tpuQuic)![1])]));

      const refused = connectTpu(client, ports.get(refusing)!, staked);
      await refused.waitFor(closed);
      assert.equal(refused.closed()!.code, 0x02, 'refused from the start (CONNECTION_REFUSED)');

      // Hostile datagrams at every TPU: random bytes, and long headers past 1,200 bytes that claim to be Initials.
      const socket = dgram.createSocket('udp4');
      await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
      const hostile = fc.sample(
        fc.oneof(
          fc.uint8Array({ minLength: 0, maxLength: 1500 }).map((bytes) => Buffer.from(bytes)),
          fc.integer({ min: 0, max: 20 }).map((cid) => Buffer.concat([Buffer.from([0xc3, 0, 0, 0, 1, cid]), randomBytes(1250)])),
        ),
        { seed: 7, numRuns: 400 },
      );
      for (const port of ports.values()) for (const datagram of hostile) socket.send(datagram, port, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 500));
      socket.close();
      assert.equal(child.exitCode, null, 'still running');

      const c = new Connection(url, 'confirmed');
      const alice = await fundedKeypair(c);
      const bob = Keypair.generate();
      const tx = Buffer.from(await transferTx(c, alice, bob.publicKey, 7_000_000), 'base64');
      const signature = bs58.encode(tx.subarray(1, 65));
      const others = validators.slice(1);
      for (const validator of others) {
        const opened = connectTpu(client, ports.get(validator)!, staked);
        await opened.waitFor(established);
        await until(() => opened.entry.connection.streams.credit > 0, 2_000);
        assert.equal(opened.entry.connection.streams.credit, 2_048, 'the only stake: the cap');
        client.send(opened.entry, tx, 1);
        await opened.waitFor(delivered(1));
      }
      await waitForStatus(c, signature, 15_000);
      assert.equal(await balanceOf(c, bob.publicKey), 7_000_000);
      const exposure = (await post(url, { jsonrpc: '2.0', id: 1, method: 'getTransactionExposure', params: [[signature]] })).body.result
        .value[0];
      assert.equal(exposure.path, 'tpu');
      assert.ok(others.includes(exposure.leader));
      assert.deepEqual(exposure.tpuSenders, [bs58.encode(staked.publicKey)]);
      assert.deepEqual(exposure.exposedTo.slice(0, 1), [others[0]], 'in the order their TPUs received it');
    } finally {
      await client.close();
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });

  it('stops start-up on a bad stakes file or TPU fault, naming it', async () => {
    const dir = makeDataDir();
    dirs.push(dir);
    const bad = path.join(dir, 'stakes.json');
    fs.writeFileSync(bad, '{"nope": 1}');
    const stakes = await runCli(['ledger', '--port', '0', '--data-dir', dir, '--stakes', bad]);
    assert.notEqual(stakes.code, 0);
    assert.match(stakes.stderr, /stakes file .*stakes\.json: nope is not a public key \(32 bytes\)/);
    const fault = await runCli(['ledger', '--port', '0', '--data-dir', dir, '--tpu-fault', 'stall:0.5']);
    assert.notEqual(fault.code, 0);
    assert.match(fault.stderr, /ledger --tpu-fault: TPU fault stall takes no rate/);
  });
});
