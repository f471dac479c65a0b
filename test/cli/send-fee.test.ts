/**
 * `bin/slipway send --fee` against a gateway on a congested embedded ledger: `--fee auto`
 * sets the compute-unit price getLandingEstimate advises and signs the transaction again with
 * the fee payer's key, `--fee N` sets N; both land with that price on chain. Every misuse
 * exits 1 with words saying what to do, before anything is sent.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ComputeBudgetProgram, Keypair, type Connection } from '@solana/web3.js';
import { makeDataDir } from '../helpers/gateway';
import { runCli, startServer, type ServerProcess } from '../helpers/process';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

let dir: string;
let server: ServerProcess;
let connection: Connection;
let key: string;
before(async () => {
  dir = makeDataDir();
  // Forty market transfers a block, sent at twice that: the market pays, so the advice is not 0. A plain web3.js
  // transfer costs the block about 23,700 units (the default 6,000 units and 64 MiB loaded-data limits): the block
  // takes it whole only from 60,000 units on, where an account may take 40 % of it.
  server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'warn', SLIPWAY_MARKET: '2', SLIPWAY_BLOCK_UNITS: '80000', SLIPWAY_SLOT_MS: '200' });
  key = server.initialKey!;
  connection = connect(server.url, key);
});
after(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  fs.rmSync(dir, { recursive: true, force: true });
});

const write = (name: string, content: string) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
};
const send = (args: string[]) => runCli(['send', '--url', server.url, '--key', key, ...args]);

/** The compute-unit price of a landed transaction, read back from the chain. */
async function priceOnChain(signature: string): Promise<bigint | null> {
  const landed = await connection.getTransaction(signature, { maxSupportedTransactionVersion: 0, commitment: 'confirmed' });
  assert.ok(landed !== null, `${signature} is not on chain`);
  const keys = landed.transaction.message.staticAccountKeys;
  for (const ix of landed.transaction.message.compiledInstructions) {
    const data = Buffer.from(ix.data);
    if (keys[ix.programIdIndex]!.equals(ComputeBudgetProgram.programId) && data[0] === 3) return data.readBigUInt64LE(1);
  }
  return null;
}

describe('bin/slipway send --fee', () => {
  it('--fee auto sets the advised price and signs again; --fee N sets N; both land at that price', async () => {
    const alice = await fundedKeypair(connection);
    const keypairFile = write('alice.json', JSON.stringify([...alice.secretKey]));
    const original = await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000);
    const auto = await send([
      '--fee',
      'auto',
      '--keypair',
      keypairFile,
      '--land-within',
      '8',
      '--probability',
      '0.9',
      '--json',
      write('a.b64', original),
    ]);
    assert.equal(auto.code, 0, auto.stderr + auto.stdout);
    const [sent] = JSON.parse(auto.stdout);
    assert.equal(sent.state, 'landed');
    // The chance at the price advised: the one asked for, or a little more where the fee's rounding lifts it.
    assert.ok(sent.fee.advice.probability >= 0.9 && sent.fee.advice.probability < 0.95, String(sent.fee.advice.probability));
    assert.equal(sent.fee.advice.withinSlots, 8);
    assert.ok(sent.fee.microLamportsPerComputeUnit > 0, JSON.stringify(sent.fee));
    assert.notEqual(sent.signature, Buffer.from(original, 'base64').subarray(1, 65).toString('hex'));
    assert.equal(await priceOnChain(sent.signature), BigInt(sent.fee.microLamportsPerComputeUnit));

    const fixed = await send([
      '--fee',
      '20000000',
      '--keypair',
      keypairFile,
      write('b.b64', await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000)),
    ]);
    assert.equal(fixed.code, 0, fixed.stderr + fixed.stdout);
    assert.match(fixed.stderr, /fee set: 20000000 micro-lamports per compute unit/);
    const signature = /([1-9A-HJ-NP-Za-km-z]{86,88})\s+landed in slot/.exec(fixed.stdout)![1]!;
    assert.equal(await priceOnChain(signature), 20_000_000n);
  });

  it('refuses every misuse with what to do, sending nothing', async () => {
    const alice = Keypair.generate();
    const bob = Keypair.generate();
    const tx = write('c.b64', await transferTx(connection, alice, bob.publicKey, 1_000_000));
    const aliceFile = write('alice2.json', JSON.stringify([...alice.secretKey]));
    const bobFile = write('bob.json', JSON.stringify([...bob.secretKey]));
    for (const [args, message] of [
      [
        ['--fee', 'auto', tx],
        /--fee changes the transaction, which must then be signed again: give its fee payer's keypair file with --keypair FILE/,
      ],
      [['--fee', 'auto', '--keypair', bobFile, tx], /must be its fee payer and only signer; it has 1 signer\(s\), the fee payer /],
      [['--fee', 'auto', '--keypair', write('bad.json', '[1,2,3]'), tx], /is not a keypair file: a JSON array of 64 numbers/],
      [['--fee', 'auto', '--keypair', path.join(dir, 'missing.json'), tx], /cannot read the keypair file/],
      [
        ['--fee', 'auto', '--keypair', aliceFile, '--probability', '1.5', tx],
        /--probability must be a number from 0\.01 to 0\.99; got 1\.5/,
      ],
      [
        ['--fee', 'auto', '--keypair', aliceFile, '--land-within', '0', tx],
        /--land-within must be a whole number of slots from 1 to 150; got 0/,
      ],
      [['--fee=-5', '--keypair', aliceFile, tx], /--fee must be auto or a whole number of micro-lamports per compute unit; got "-5"/],
      [['--fee', '1e3', '--keypair', aliceFile, tx], /--fee must be auto or a whole number/],
      [
        ['--fee', '5', '--keypair', aliceFile, '--probability', '0.5', tx],
        /--land-within and --probability go with --fee auto, not a price of your own/,
      ],
      [['--land-within', '8', tx], /--land-within and --probability go with --fee auto/],
      [['--keypair', aliceFile, tx], /--keypair goes with --fee/],
      [['--fee', 'auto', '--keypair', aliceFile, '--bundle', tx], /--fee applies to single sends and batches/],
    ] as const) {
      const result = await send([...args]);
      assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
      assert.match(result.stderr, message, args.join(' '));
    }
    // Nothing was sent: alice was never funded, and no transaction of hers is known.
    assert.equal(await connection.getBalance(alice.publicKey), 0);
  });
});
