/**
 * Interop step 3: a quic-go client lands a transfer through the local cluster's TPU. The
 * cluster is `bin/slipway ledger` in a process of its own; the leaders of the next slots
 * and their `tpuQuic` addresses come from its JSON-RPC, as any sender finds them; the
 * transfer is signed with @solana/web3.js and the recipient's balance is read back.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Keypair, SystemProgram, Transaction, PublicKey } from '@solana/web3.js';
import bs58 from 'bs58';
import { runQuicGoSender } from '../test/helpers/quic-go-peer';

const ROOT = path.resolve(__dirname, '../..');

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: T; error?: { message: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

async function startLedger(dataDir: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(path.join(ROOT, 'bin/slipway'), ['ledger', '--port', '0', '--slot-ms', '100', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bin/slipway ledger exited with ${code}: ${stderr}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]!);
    });
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export async function landThroughLedgerTpu(): Promise<{ name: string; passed: boolean; detail: string }> {
  const name = "quic-go client → the local cluster's TPU (bin/slipway ledger)";
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-interop-ledger-'));
  const ledger = await startLedger(dataDir);
  try {
    const nodes = await rpc<{ pubkey: string; tpuQuic: string | null }[]>(ledger.url, 'getClusterNodes');
    if (!nodes.some((node) => node.tpuQuic !== null)) return { name, passed: false, detail: 'getClusterNodes lists no tpuQuic address' };
    const payer = Keypair.generate();
    await rpc(ledger.url, 'requestAirdrop', [payer.publicKey.toBase58(), 1_000_000_000]);
    const recipient = Keypair.generate().publicKey;
    const { value } = await rpc<{ value: { blockhash: string } }>(ledger.url, 'getLatestBlockhash');
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: value.blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: new PublicKey(recipient), lamports: 1_000_000 }),
    );
    tx.sign(payer);
    const wire = tx.serialize();
    const slot = await rpc<number>(ledger.url, 'getSlot');
    const leaders = [...new Set(await rpc<string[]>(ledger.url, 'getSlotLeaders', [slot, 8]))];
    const sender = Keypair.generate();
    const sent: string[] = [];
    for (const leader of leaders) {
      const address = nodes.find((node) => node.pubkey === leader)?.tpuQuic;
      if (address === null || address === undefined) continue;
      const result = await runQuicGoSender({ port: Number(address.split(':').pop()), identity: sender.secretKey, transactions: [wire] });
      if (result.code !== 0)
        return { name, passed: false, detail: `quic-go's sender failed on ${leader}'s TPU ${address}: ${JSON.stringify(result.result)}` };
      sent.push(`${leader} at ${address}`);
    }
    const deadline = Date.now() + 20_000;
    for (;;) {
      const balance = await rpc<{ value: number }>(ledger.url, 'getBalance', [recipient.toBase58()]);
      if (balance.value === 1_000_000) break;
      if (Date.now() > deadline)
        return { name, passed: false, detail: `sent to ${sent.join(', ')}; the transfer did not land within 20 s` };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const exposures = await rpc<{ value: ({ leader: string; path: string; tpuSenders?: string[] } | null)[] }>(
      ledger.url,
      'getTransactionExposure',
      [[bs58.encode(tx.signature!)]],
    );
    const exposure = exposures.value[0];
    if (exposure?.path !== 'tpu' || exposure.tpuSenders?.[0] !== sender.publicKey.toBase58())
      return {
        name,
        passed: false,
        detail: `landed, but the ledger recorded ${JSON.stringify(exposure)} rather than the TPU path and quic-go's identity`,
      };
    return {
      name,
      passed: true,
      detail: `a transfer signed with @solana/web3.js, sent by quic-go (identity ${sender.publicKey.toBase58()}) to ${sent.join(', ')}, landed: the recipient holds 1,000,000 lamports; the ledger recorded path ${exposure.path}, leader ${exposure.leader}, sender ${exposure.tpuSenders[0]}`,
    };
  } finally {
    await ledger.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
