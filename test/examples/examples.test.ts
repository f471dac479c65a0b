/**
 * The examples in examples/ run as a reader would run them, against a real gateway: each
 * must finish with its transactions landed. (They import `slipway/client` by the package's
 * name, which resolves to this checkout's build.)
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { makeDataDir } from '../helpers/gateway';
import { startServer, type ServerProcess } from '../helpers/process';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

const ROOT = path.resolve(__dirname, '../../..');
let dir: string;
let server: ServerProcess;
before(async () => {
  dir = makeDataDir();
  server = await startServer(dir, { SLIPWAY_LOG_LEVEL: 'warn' });
});
after(async () => {
  server.child.kill('SIGTERM');
  await server.exited;
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(
  command: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      env: { ...process.env, SLIPWAY_URL: server.url, SLIPWAY_API_KEY: server.initialKey!, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const SIGNATURE = '[1-9A-HJ-NP-Za-km-z]{86,88}';

describe('examples/', () => {
  it('web3js.mjs lands a transfer', async () => {
    const { code, stdout, stderr } = await run(process.execPath, ['examples/web3js.mjs']);
    assert.equal(code, 0, stderr);
    assert.match(stdout, new RegExp(`^landed ${SIGNATURE} in slot \\d+; the recipient has 1000000 lamports\\n$`));
  });

  it('kit.mjs lands a transfer', async () => {
    const { code, stdout, stderr } = await run(process.execPath, ['examples/kit.mjs']);
    assert.equal(code, 0, stderr);
    assert.match(stdout, new RegExp(`^landed ${SIGNATURE} in slot \\d+\\n$`));
  });

  it('slipway-client.mjs lands a transaction at the advised price, a batch and a bundle, and shows a typed refusal', async () => {
    const { code, stdout, stderr } = await run(process.execPath, ['examples/slipway-client.mjs']);
    assert.equal(code, 0, stderr);
    const lines = stdout.trimEnd().split('\n');
    assert.deepEqual(
      lines.slice(0, 4).map((l) => (l.split(' ')[0] === 'batch' ? 'batch member' : l.split(' ')[0])),
      ['transaction', 'batch member', 'batch member', 'bundle'],
    );
    for (const line of lines.slice(0, 4)) assert.match(line, /: landed in slot \d+$/);
    assert.match(lines[4]!, /^advised \d+ micro-lamports per unit for 90 % within 8 slots, from \d+ outcomes$/);
    assert.match(lines[5]!, /^refused as expected: -32602 /);
  });

  it('curl.sh sends a transaction and a batch and reads their status', async () => {
    const c = connect(server.url, server.initialKey!);
    const alice = await fundedKeypair(c);
    const tx = await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000);
    const { code, stdout, stderr } = await run('sh', ['examples/curl.sh'], { TX: tx });
    assert.equal(code, 0, stderr);
    const [blockhash, sent, batch, status] = stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(typeof blockhash.result.value.blockhash, 'string');
    assert.match(sent.result, new RegExp(`^${SIGNATURE}$`));
    assert.deepEqual(batch, { code: 1, message: 'success', signatures: [sent.result] });
    assert.equal(status.result.value[0].id, sent.result);
    assert.ok(['forwarded', 'landed'].includes(status.result.value[0].state));
  });
});
