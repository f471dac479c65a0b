/** The contract tests of test/http/read-methods.test.ts, against a gateway running as one of a cluster (PostgreSQL, Redis, a local cluster's RPC node and block engine). */
process.env.SLIPWAY_TEST_TOPOLOGY = 'cluster';
// eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after the topology is set
require('../http/read-methods.test');
