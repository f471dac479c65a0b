/**
 * The TPU route's identity and addresses: a Solana CLI keypair file loads to the same key
 * the CLI would show, files others may read and damaged files are refused with a message
 * saying what to do, no file gives a fresh identity; TPU addresses are read from
 * getClusterNodes as Agave's client reads them (tpuQuic, else tpu + 6); and `bin/slipway
 * serve` says at start-up which identity it sends as, never the secret half.
 */
import assert from 'node:assert/strict';
import { sign, verify, createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { parseSocketAddress, tpuAddressOf } from '../../src/upstreams/cluster-nodes';
import { loadTpuIdentity } from '../../src/upstreams/tpu-identity';
import { runCli, startServer } from '../helpers/process';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-identity-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

function keypairFile(name: string, bytes: unknown, mode = 0o600): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, JSON.stringify(bytes));
  fs.chmodSync(file, mode);
  return file;
}

describe('TPU identity (identityKeypair)', () => {
  it('loads a Solana CLI keypair file: the same public key as @solana/web3.js, and a private key that signs for it', () => {
    const keypair = Keypair.generate();
    const identity = loadTpuIdentity(keypairFile('id.json', [...keypair.secretKey]));
    assert.equal(identity.address, keypair.publicKey.toBase58());
    assert.equal(identity.source, 'file');
    const signature = sign(null, Buffer.from('slipway'), identity.privateKey);
    assert.ok(verify(null, Buffer.from('slipway'), createPublicKey(identity.privateKey), signature));
    assert.deepEqual(identity.publicKey, Buffer.from(keypair.publicKey.toBytes()));
  });

  it('refuses a file others may read, naming the chmod to run', () => {
    const file = keypairFile('open.json', [...Keypair.generate().secretKey], 0o644);
    assert.throws(() => loadTpuIdentity(file), {
      message: `identityKeypair ${file}: others may read it (mode 644); run chmod 600 ${file}`,
    });
  });

  it('refuses a missing file, a file that is not a keypair, and one whose halves do not match', () => {
    assert.throws(() => loadTpuIdentity(path.join(dir, 'none.json')), /cannot be read \(ENOENT\)/);
    assert.throws(
      () => loadTpuIdentity(keypairFile('short.json', [1, 2, 3])),
      /not a Solana CLI keypair file \(a JSON array of 64 numbers from 0 to 255\)/,
    );
    const bytes = [...Keypair.generate().secretKey];
    bytes[40] = (bytes[40]! + 1) % 256;
    assert.throws(() => loadTpuIdentity(keypairFile('damaged.json', bytes)), /its public key does not match its secret key/);
    fs.writeFileSync(path.join(dir, 'text.json'), 'not json');
    fs.chmodSync(path.join(dir, 'text.json'), 0o600);
    assert.throws(() => loadTpuIdentity(path.join(dir, 'text.json')), /not a Solana CLI keypair file/);
  });

  it('without a file, makes a fresh identity each time, said to be generated', () => {
    const a = loadTpuIdentity('');
    const b = loadTpuIdentity('');
    assert.equal(a.source, 'generated');
    assert.notEqual(a.address, b.address);
  });
});

describe('TPU addresses from getClusterNodes', () => {
  it('takes tpuQuic, else tpu + 6 (as tpu-client-next), else none', () => {
    assert.deepEqual(tpuAddressOf({ tpuQuic: '10.0.0.1:8009', tpu: '10.0.0.1:8003' }), { host: '10.0.0.1', port: 8009 });
    assert.deepEqual(tpuAddressOf({ tpuQuic: null, tpu: '10.0.0.1:8003' }), { host: '10.0.0.1', port: 8009 });
    assert.equal(tpuAddressOf({ tpuQuic: null, tpu: null }), undefined);
    assert.deepEqual(parseSocketAddress('[2001:db8::1]:8009'), { host: '2001:db8::1', port: 8009 });
    for (const bad of ['10.0.0.1', '10.0.0.1:0', '10.0.0.1:70000', ':8009', 42, 'a b:1'])
      assert.equal(parseSocketAddress(bad), undefined, String(bad));
  });
});

describe('bin/slipway serve with a tpu upstream', () => {
  const configFile = path.join(dir, 'tpu.config.json');
  fs.writeFileSync(configFile, JSON.stringify({ upstreams: { leaders: { type: 'tpu', urls: ['http://127.0.0.1:1'] } } }));
  const identityLine = async (server: Awaited<ReturnType<typeof startServer>>) => {
    for (let i = 0; i < 200 && !server.stdout.some((line) => line.includes('TPU identity')); i++)
      await new Promise((resolve) => setTimeout(resolve, 25));
    return server.stdout.find((line) => line.includes('TPU identity')) ?? '';
  };

  it('without identityKeypair says it made an unstaked identity for this run', async () => {
    const server = await startServer(fs.mkdtempSync(path.join(dir, 'data-')), { SLIPWAY_CONFIG: configFile });
    try {
      assert.match(
        await identityLine(server),
        /^slipway: TPU identity [1-9A-HJ-NP-Za-km-z]{32,44}, made for this run: unstaked, so leaders give it the least stream credit; set identityKeypair to send as a staked identity$/,
      );
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('with identityKeypair says its public key, and writes the secret nowhere', async () => {
    const keypair = Keypair.generate();
    const file = keypairFile('serve-id.json', [...keypair.secretKey]);
    const server = await startServer(fs.mkdtempSync(path.join(dir, 'data-')), {
      SLIPWAY_CONFIG: configFile,
      SLIPWAY_IDENTITY_KEYPAIR: file,
    });
    try {
      assert.equal(await identityLine(server), `slipway: TPU identity ${keypair.publicKey.toBase58()} (from identityKeypair)`);
      const written = [...server.stdout, ...server.stderr].join('\n');
      assert.ok(!written.includes(fs.readFileSync(file, 'utf8')) && !written.includes(Buffer.from(keypair.secretKey).toString('base64')));
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('stops start-up on a keypair file others may read, naming the chmod to run', async () => {
    const file = keypairFile('open-id.json', [...Keypair.generate().secretKey], 0o644);
    const run = await runCli(['serve', '--port', '0', '--data-dir', fs.mkdtempSync(path.join(dir, 'data-'))], {
      SLIPWAY_CONFIG: configFile,
      SLIPWAY_IDENTITY_KEYPAIR: file,
    });
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /chmod 600/);
  });
});
