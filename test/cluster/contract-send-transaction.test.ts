/**
 * sendTransaction through a gateway set up as one of a cluster: its journal in PostgreSQL, its
 * duplicate claims in Redis, and a local cluster's RPC node as its only upstream. What this
 * shape changes is checked where it lives: the row in PostgreSQL's tables, the claim in Redis,
 * and the node's own record of what reached it (getTransactionExposure).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import pg from 'pg';
import { Redis } from 'ioredis';
import { startCluster, type Cluster } from '../helpers/cluster';
import { exposuresAt } from '../helpers/exposure';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { POSTGRES_URL, testSchema } from '../helpers/postgres';
import { REDIS_URL, testRedisPrefix } from '../helpers/redis';
import { post } from '../helpers/rpc';
import { balanceOf, connect, failingTransferTx, fundedKeypair, transferTx, waitForStatus } from '../helpers/solana';

describe("sendTransaction through a gateway of a cluster (PostgreSQL journal, Redis duplicate claims, a local cluster's RPC node)", () => {
  let cluster: Cluster;
  let gw: TestGateway;
  let connection: Connection;
  let node: string;
  const schema = testSchema();
  const redisPrefix = testRedisPrefix();
  const database = new pg.Client({ connectionString: POSTGRES_URL });
  const redis = new Redis(REDIS_URL);

  before(async () => {
    cluster = await startCluster(1, 50);
    node = cluster.nodes[0]!.url;
    gw = await startTestGateway(
      { postgresUrl: POSTGRES_URL, postgresSchema: schema.schema, redisUrl: REDIS_URL, redisKeyPrefix: redisPrefix.prefix },
      {
        upstreams: { rpc: { type: 'rpc', urls: [node] }, engine: { type: 'jito', urls: [`${node}/api/v1`], requireTip: false } },
        routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
      },
    );
    connection = connect(gw.url, gw.key);
    await database.connect();
  });
  after(async () => {
    // A start that failed leaves nothing to close; the cluster, if it started, still is.
    await gw?.close();
    await cluster?.close();
    await database.end();
    await redis.quit();
    await schema.drop();
    await redisPrefix.clean();
  });

  const send = (tx: string, config: Record<string, unknown> = { encoding: 'base64' }) =>
    post(gw.url, { jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, config] }, { 'x-api-key': gw.key });
  const journalRows = async (signature: string) =>
    (await database.query(`SELECT state FROM ${schema.schema}.submission_transactions WHERE signature = $1`, [signature])).rows;
  const signatureOf = (tx: string) => bs58.encode(Transaction.from(Buffer.from(tx, 'base64')).signature!);

  it("a web3.js transfer reaches the node by its public RPC (the node's record), lands, and is one row of PostgreSQL's journal", async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 0.25 * LAMPORTS_PER_SOL);
    const signature = await connection.sendRawTransaction(Buffer.from(tx, 'base64'));
    assert.equal(signature, signatureOf(tx));
    assert.equal((await waitForStatus(connection, signature)).err, null);
    assert.equal(await balanceOf(connection, bob.publicKey), 0.25 * LAMPORTS_PER_SOL);
    const [exposure] = await exposuresAt(node, [signature]);
    assert.equal(exposure?.path, 'public', 'the node took it by sendTransaction');
    assert.equal((await journalRows(signature)).length, 1);
  });

  it('the same bytes sent three times at once and once more: one signature, one claim in Redis, one row in PostgreSQL, one transfer', async () => {
    const alice = await fundedKeypair(connection);
    const bob = Keypair.generate();
    const tx = await transferTx(connection, alice, bob.publicKey, 1_000_000);
    const answers = await Promise.all([send(tx), send(tx), send(tx, { encoding: 'base64', skipPreflight: true })]);
    const again = await send(tx);
    for (const answer of [...answers, again]) assert.equal(answer.body.result, signatureOf(tx), JSON.stringify(answer.body));
    await waitForStatus(connection, signatureOf(tx));
    assert.equal(await balanceOf(connection, bob.publicKey), 1_000_000);
    assert.equal((await journalRows(signatureOf(tx))).length, 1, 'journaled (and forwarded) once');
    const claims = await redis.keys(`${redisPrefix.prefix}dup:*`);
    assert.ok(claims.length >= 1, 'duplicate claims are kept in Redis');
    assert.ok((await redis.pttl(claims[0]!)) > 0, 'a claim expires with the duplicate window');
  });

  it("a failing transfer is refused with the node's preflight failure (-32002, its err and the System Program's logs); nothing reaches the node or the journal", async () => {
    const alice = await fundedKeypair(connection);
    const before = await balanceOf(connection, alice.publicKey);
    const tx = await failingTransferTx(connection, alice, Keypair.generate().publicKey);
    const answer = await send(tx);
    assert.equal(answer.body.error.code, -32002);
    assert.equal(answer.body.error.message, 'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1');
    assert.deepEqual(answer.body.error.data.err, { InstructionError: [0, { Custom: 1 }] });
    assert.deepEqual(answer.body.error.data.logs, [
      `Program ${SystemProgram.programId.toBase58()} invoke [1]`,
      `Transfer: insufficient lamports ${before - 5000}, need ${1_000_000 * LAMPORTS_PER_SOL}`,
      `Program ${SystemProgram.programId.toBase58()} failed: custom program error: 0x1`,
    ]);
    assert.deepEqual(await exposuresAt(node, [signatureOf(tx)]), [null]);
    assert.equal((await journalRows(signatureOf(tx))).length, 0);
    assert.equal(await balanceOf(connection, alice.publicKey), before);
  });

  it('with skipPreflight, a failing transfer is sent to the node, fails on its chain and pays the fee', async () => {
    const alice = await fundedKeypair(connection);
    const before = await balanceOf(connection, alice.publicKey);
    const tx = await failingTransferTx(connection, alice, Keypair.generate().publicKey);
    const answer = await send(tx, { encoding: 'base64', skipPreflight: true });
    assert.equal(answer.body.result, signatureOf(tx));
    assert.deepEqual((await waitForStatus(connection, signatureOf(tx))).err, { InstructionError: [0, { Custom: 1 }] });
    assert.equal((await exposuresAt(node, [signatureOf(tx)]))[0]?.path, 'public');
    assert.equal(await balanceOf(connection, alice.publicKey), before - 5000);
  });
});
