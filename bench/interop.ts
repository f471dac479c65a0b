/**
 * `npm run interop`: Slipway's QUIC against an implementation that is not ours — Debian's
 * quic-go 0.29 (interop/quic-go, built offline in GOPATH mode; the run says what to install
 * when Go or the package is missing). Not part of `npm test`: it needs that toolchain.
 *
 * 1. Slipway's TPU client (the identity loaded from a keypair file, as identityKeypair is)
 *    sends signed transactions to a quic-go receiver, with and without Retry: the receiver
 *    checks the ALPN and reads the client certificate's ed25519 key; both are compared with
 *    the configured identity, and the bytes received with the bytes sent.
 * 2. Another ALPN offered by Slipway's client is refused by quic-go's server.
 * 3. A quic-go client lands a transfer through the local cluster's TPU (`bin/slipway
 *    ledger`): the current leader's tpuQuic from getClusterNodes, the balance read back.
 *
 * Prints what each step proved and writes bench/results/interop.json.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Keypair } from '@solana/web3.js';
import { clientTls } from '../src/quic/tpu-handshakes';
import { QuicClientEndpoint } from '../src/quic/udp-endpoint';
import { loadTpuIdentity } from '../src/upstreams/tpu-identity';
import { newSigner, paddedTransferFactory } from './signed-transactions';
import { buildQuicGoPeer, startQuicGoReceiver, type ReceiverEvent } from '../test/helpers/quic-go-peer';
import { landThroughLedgerTpu } from './interop-ledger';

interface Step {
  readonly name: string;
  readonly passed: boolean;
  readonly detail: string;
}

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

async function slipwayToQuicGo(retry: boolean, keypairFile: string): Promise<Step> {
  const identity = loadTpuIdentity(keypairFile);
  const receiver = await startQuicGoReceiver({ retry });
  const endpoint = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
  try {
    const signer = newSigner();
    const sizes = [1232, 1232, 700, 300, 1232];
    const txs = Array.from({ length: 100 }, (_, i) =>
      paddedTransferFactory(signer, newSigner().publicKey, Buffer.alloc(32, i), sizes[i % sizes.length]!)(),
    );
    let delivered = 0;
    const done = new Promise<void>((resolve, reject) => {
      const entry = endpoint.connect<number>('127.0.0.1', receiver.port, { tls: clientTls(identity), idleTimeoutMs: 5_000 }, (events) => {
        for (const event of events) {
          if (event.type === 'delivered' && ++delivered === txs.length) resolve();
          if (event.type === 'closed') reject(new Error(`the connection closed: ${event.reason} (code ${event.code}, by ${event.by})`));
        }
      });
      txs.forEach((tx, i) => endpoint.send(entry, tx, i));
    });
    await done;
    await receiver.waitFor(() => receiver.events.filter((event) => event.event === 'stream').length >= txs.length, 5_000);
    const connection = receiver.events.find((event) => event.event === 'connection') as Extract<ReceiverEvent, { event: 'connection' }>;
    const received = receiver.events.filter((event) => event.event === 'stream') as Extract<ReceiverEvent, { event: 'stream' }>[];
    const problems: string[] = [];
    if (connection.alpn !== 'solana-tpu') problems.push(`ALPN ${connection.alpn}`);
    if (connection.identity !== identity.address) problems.push(`identity ${connection.identity}, configured ${identity.address}`);
    if (received.some((stream) => stream.identity !== identity.address)) problems.push('a stream under another identity');
    const sent = txs.map(sha).sort();
    const got = received.map((stream) => stream.sha256).sort();
    if (JSON.stringify(sent) !== JSON.stringify(got))
      problems.push(`${got.length} streams received, ${sent.length} sent, or their bytes differ`);
    return {
      name: `Slipway's TPU client → quic-go receiver${retry ? ' demanding Retry' : ''}`,
      passed: problems.length === 0,
      detail:
        problems.length === 0
          ? `${txs.length} signed transactions (300–1,232 bytes) delivered whole and acknowledged; quic-go read ALPN solana-tpu and the client certificate's ed25519 key ${identity.address}, the configured identity; every SHA-256 matched`
          : problems.join('; '),
    };
  } finally {
    await endpoint.close();
    await receiver.close();
  }
}

async function wrongAlpnRefused(keypairFile: string): Promise<Step> {
  const receiver = await startQuicGoReceiver();
  const endpoint = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
  try {
    const closed = await new Promise<{ code: number; by: string }>((resolve) => {
      endpoint.connect<number>(
        '127.0.0.1',
        receiver.port,
        { tls: clientTls(loadTpuIdentity(keypairFile), 'h3'), idleTimeoutMs: 5_000 },
        (events) => {
          for (const event of events) if (event.type === 'closed') resolve(event);
        },
      );
    });
    return {
      name: 'Slipway offering another ALPN (h3) to quic-go',
      passed: closed.by === 'peer' && closed.code === 0x178,
      detail: `closed by ${closed.by} with 0x${closed.code.toString(16)} (0x178: TLS no_application_protocol)`,
    };
  } finally {
    await endpoint.close();
    await receiver.close();
  }
}

async function main(): Promise<void> {
  try {
    await buildQuicGoPeer();
  } catch (error) {
    process.stderr.write(
      `interop needs Go 1.19 and Debian's quic-go 0.29, which are not installed:\n  apt-get update && apt-get install golang-go golang-github-lucas-clemente-quic-go-dev\n(${(error as Error).message})\n`,
    );
    process.exitCode = 1;
    return;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-interop-'));
  const keypairFile = path.join(dir, 'identity.json');
  fs.writeFileSync(keypairFile, JSON.stringify([...Keypair.generate().secretKey]), { mode: 0o600 });
  const steps: Step[] = [];
  try {
    for (const retry of [false, true]) steps.push(await slipwayToQuicGo(retry, keypairFile));
    steps.push(await wrongAlpnRefused(keypairFile));
    steps.push(
      await landThroughLedgerTpu().catch((error: unknown) => ({
        name: "quic-go client → the local cluster's TPU (bin/slipway ledger)",
        passed: false,
        detail: error instanceof Error ? error.message : String(error),
      })),
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  for (const step of steps) process.stdout.write(`${step.passed ? 'ok  ' : 'FAIL'}  ${step.name}\n      ${step.detail}\n`);
  const results = { at: new Date().toISOString(), node: process.version, peer: 'quic-go 0.29.0 (Debian), Go 1.19', steps };
  fs.writeFileSync(path.resolve(__dirname, '../../bench/results/interop.json'), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write('wrote bench/results/interop.json\n');
  if (steps.some((step) => !step.passed)) process.exitCode = 1;
}

main().catch((error: unknown) => {
  process.stderr.write(`interop failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exitCode = 1;
});
