/**
 * One gateway for a whole test file: started before its tests and closed after them, with a
 * @solana/web3.js connection that carries the all-permissions key.
 */
import { after, before } from 'node:test';
import type { Connection, Keypair } from '@solana/web3.js';
import type { Settings } from '../../src/config/config';
import { startCluster, type Cluster } from './cluster';
import { startTestGateway, type TestGateway } from './gateway';
import { POSTGRES_URL, testSchema } from './postgres';
import { REDIS_URL, testRedisPrefix } from './redis';
import { connect, fundedKeypair } from './solana';

/**
 * `cluster` (set by the files in test/cluster/contract-*.test.ts before they load a contract
 * test file): the gateway runs as one of a cluster would, on PostgreSQL and Redis, in front
 * of a local cluster's RPC node and block engine instead of the embedded ledger.
 */
export const TOPOLOGY: 'single' | 'cluster' = process.env.SLIPWAY_TEST_TOPOLOGY === 'cluster' ? 'cluster' : 'single';

/** A gateway on the shared stores in front of an in-process local cluster; `close` also drops its schema and Redis keys. */
async function startClusterGateway(settings: Settings): Promise<TestGateway> {
  const cluster: Cluster = await startCluster(1, Number(settings.slotMs ?? 50));
  const { schema, drop } = testSchema();
  const { prefix, clean } = testRedisPrefix();
  const node = cluster.nodes[0]!.url;
  const gw = await startTestGateway(
    { ...settings, postgresUrl: POSTGRES_URL, postgresSchema: schema, redisUrl: REDIS_URL, redisKeyPrefix: prefix },
    {
      upstreams: { rpc: { type: 'rpc', urls: [node] }, engine: { type: 'jito', urls: [`${node}/api/v1`], requireTip: false } },
      routes: { sendTransaction: ['rpc'], submitBatch: ['rpc'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'rpc' },
      rebroadcast: { intervalMs: 200, maxAttempts: 1000, queueCapacity: 10_000 },
    },
  );
  return {
    ...gw,
    async close() {
      await gw.close();
      await cluster.close();
      await drop();
      await clean();
    },
  };
}

export interface GatewayContext {
  readonly gw: TestGateway;
  readonly connection: Connection;
}

/** Call at the top of a test file; the context's fields are set once the file's tests run. */
export function useGateway(settings: Settings = {}): GatewayContext {
  const context = {} as { gw: TestGateway; connection: Connection };
  before(async () => {
    context.gw = TOPOLOGY === 'cluster' ? await startClusterGateway(settings) : await startTestGateway(settings);
    context.connection = connect(context.gw.url, context.gw.key);
  });
  after(() => context.gw.close());
  return context;
}

/** As useGateway, with a payer funded with `sol` before the file's tests run. */
export function useFundedGateway(settings: Settings = {}, sol = 10): GatewayContext & { readonly payer: Keypair } {
  const context = useGateway(settings) as GatewayContext & { payer: Keypair };
  before(async () => {
    context.payer = await fundedKeypair(context.connection, sol);
  });
  return context;
}
