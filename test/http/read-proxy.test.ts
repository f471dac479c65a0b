/**
 * Reads are not an open proxy to the operator's RPC: only the allow-listed methods are
 * forwarded (readMethods), requestAirdrop only to a local ledger, and an upstream answer
 * larger than maxUpstreamAnswerBytes is refused, not relayed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_READ_METHODS, isLocalUpstream, readMethodPolicy } from '../../src/http/read-methods';
import { startCluster, type Cluster } from '../helpers/cluster';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc } from '../helpers/rpc';

const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
/** The SlotHashes sysvar: 20 KB of data. */
const SLOT_HASHES = 'SysvarS1otHashes111111111111111111111111111';

let cluster: Cluster;
let gw: TestGateway;
before(async () => {
  cluster = await startCluster(1);
  gw = await startTestGateway({}, { upstreams: { rpc: { type: 'rpc', urls: [cluster.nodes[0]!.url] } }, maxUpstreamAnswerBytes: 4_096 });
});
after(async () => {
  await gw.close();
  await cluster.close();
});

const forwarded = (method: string) => cluster.nodes[0]!.calls.filter((call) => call.method === method).length;

describe('reads through the gateway', () => {
  it('a method outside the allow-list is refused with -32601 naming the setting, and never reaches the upstream', async () => {
    for (const method of ['getProgramAccounts', 'getBlock', 'getTokenAccountsByOwner', 'getLeaderSchedule', 'valueOf', '__proto__']) {
      const answer = await rpc(gw.url, gw.key, method, []);
      assert.equal(answer.body.error.code, -32601, method);
      assert.match(answer.body.error.message, /is not served by this gateway.*readMethods/);
      assert.equal(forwarded(method), 0, `${method} was forwarded`);
    }
  });

  it('in a JSON-RPC batch, each entry is judged alone', async () => {
    const response = await fetch(gw.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': gw.key },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'getSlot' },
        { jsonrpc: '2.0', id: 2, method: 'getProgramAccounts', params: [TOKEN_PROGRAM] },
      ]),
    });
    const [slot, refused] = (await response.json()) as any[];
    assert.equal(typeof slot.result, 'number');
    assert.equal(refused.error.code, -32601);
    assert.match(refused.error.message, /is not served by this gateway.*readMethods/);
    assert.equal(forwarded('getProgramAccounts'), 0);
  });

  it('requestAirdrop is forwarded to a local cluster, and refused in front of a remote node', () => {
    assert.equal(isLocalUpstream({ type: 'rpc', urls: [cluster.nodes[0]!.url] }), true);
    assert.equal(isLocalUpstream({ type: 'rpc', urls: ['https://rpc.example.com'] }), false);
    assert.equal(isLocalUpstream({ type: 'rpc', urls: ['http://127.0.0.1:8899', 'http://10.0.0.2:8899'] }), false);
    assert.equal(isLocalUpstream({ type: 'embedded' }), true);
    assert.equal(readMethodPolicy([], false)('requestAirdrop'), false);
    assert.equal(readMethodPolicy([], true)('requestAirdrop'), true);
    assert.equal(readMethodPolicy(['getSlot'], false)('getBalance'), false);
    assert.equal(readMethodPolicy(['*'], false)('getProgramAccounts'), true);
    for (const method of DEFAULT_READ_METHODS) assert.equal(readMethodPolicy([], false)(method), true);
  });

  it('an answer larger than maxUpstreamAnswerBytes is refused with -32089, and the node stays healthy', async () => {
    const big = await rpc(gw.url, gw.key, 'getAccountInfo', [SLOT_HASHES, { encoding: 'base64' }]);
    assert.equal(big.body.error.code, -32089);
    assert.match(big.body.error.message, /^the answer to getAccountInfo is larger than 4096 bytes \(maxUpstreamAnswerBytes\)/);
    const small = await rpc(gw.url, gw.key, 'getSlot', []);
    assert.equal(typeof small.body.result, 'number');
    const health = await fetch(`${gw.url}/health`);
    assert.equal(health.status, 200);
  });
});
