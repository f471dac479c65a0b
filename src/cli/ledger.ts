/**
 * `slipway ledger`: the embedded ledger as a standalone local cluster over HTTP (a Solana
 * JSON-RPC node and a Jito-style block engine) and QUIC (a TPU per validator), the way one
 * uses a local test validator.
 */
import path from 'node:path';
import { resolveConfig, type SlipwayConfig } from '../config/config';
import { settingFlags, settingsFromFlags } from '../config/flags';
import { FaultInjector, parseFaultSetting } from '../ledger/fault-injector';
import { createLedgerNode } from '../ledger/ledger-node';
import { LocalLedger } from '../ledger/local-ledger';
import { contentionOf } from '../ledger/block-producer';
import { createSocketSink } from '../market/socket-sink';
import { startMarket } from '../market/start-market';
import { StakeTable } from '../ledger/stake-table';
import { parseTpuFaultSetting, TpuFaults } from '../ledger/tpu-faults';
import { TPU_HOST, TpuListeners } from '../ledger/tpu-listeners';
import { TpuQos } from '../ledger/tpu-qos';
import { parseOptions } from './parse-options';

const DEFAULT_PORT = 8899;

export async function runLedger(args: string[]): Promise<number> {
  const { values } = parseOptions('ledger', args, {
    ...settingFlags('ledger'),
    fault: { type: 'string' },
    'tpu-fault': { type: 'string' },
  });
  const flags = settingsFromFlags('ledger', values);
  const config = resolveConfig({ ...flags, port: flags.port ?? DEFAULT_PORT });
  const faults = new FaultInjector();
  if (values.fault !== undefined) {
    const setting = parseFaultSetting(values.fault);
    if (typeof setting === 'string') throw new Error(`ledger --fault: ${setting}`);
    faults.set(setting);
  }
  const ledgerDir = path.join(config.dataDir, 'ledger-node');
  const ledger = LocalLedger.open(
    {
      slotMs: config.slotMs,
      leaders: config.ledgerLeaders.length > 0 ? config.ledgerLeaders : undefined,
      sandwichers: config.ledgerSandwichers,
      contention: contentionOf(config),
    },
    ledgerDir,
  );
  const tpuFaults = tpuFaultsOf(values['tpu-fault'], ledger.schedule.identities);
  const qos = new TpuQos(config.ledgerStakes === '' ? new StakeTable() : StakeTable.read(config.ledgerStakes), qosSettings(config));
  const save = () => ledger.save(ledgerDir);
  ledger.onUnjournaledChange = save;
  const snapshots = setInterval(save, config.snapshotIntervalMs);
  snapshots.unref();
  ledger.start();
  const node = createLedgerNode({ ledger, faults, tpuFaults, logLevel: config.logLevel });
  const tpus = await TpuListeners.open({
    ledger,
    faults: tpuFaults,
    qos,
    basePort: config.tpuBasePort,
    onError: (error) => node.log.error({ err: error }, 'a TPU transaction failed unexpectedly'),
  });
  await node.listen({ host: config.host, port: config.port });
  const address = node.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  ledger.clusterNodes.setRpc(`${host}:${port}`);
  // The market sends as outside senders do: over the node's and the TPUs' own sockets, once they listen.
  const sink =
    config.market > 0
      ? createSocketSink({
          rpcUrl: `http://${reachableHost(config.host)}:${port}`,
          tpus: new Map(tpus.listeners.map(({ identity, port: tpuPort }) => [identity, { host: TPU_HOST, port: tpuPort }])),
        })
      : undefined;
  const market = startMarket(ledger, config.market, config.slotMs, { sink, seed: config.marketSeed });
  process.stdout.write(
    `slipway ledger: TPU (QUIC, solana-tpu) ${tpus.listeners.map(({ identity, port: tpuPort }) => `${identity}=127.0.0.1:${tpuPort}`).join(' ')}\n` +
      `slipway ledger: listening on http://${host}:${port} (Solana JSON-RPC on /, block engine on /api/v1/bundles and /api/v1/transactions, data dir: ${config.dataDir})\n`,
  );
  if (market !== undefined && sink !== undefined)
    process.stdout.write(`slipway ledger: market at load ${config.market} sending over these sockets (TPU identity ${sink.tpuIdentity})\n`);

  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  clearInterval(snapshots);
  market?.stop();
  await sink?.close();
  await tpus.close();
  await node.close();
  ledger.stop();
  save();
  return 0;
}

/** Where a sender on this machine reaches a server listening on `host` (all addresses: the loopback). */
function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') ? `[${host}]` : host;
}

/** `--tpu-fault MODE[:RATE][@VALIDATOR],…`, applied in order. */
function tpuFaultsOf(flag: string | undefined, validators: readonly string[]): TpuFaults {
  const faults = new TpuFaults();
  for (const item of flag === undefined ? [] : flag.split(',')) {
    const setting = parseTpuFaultSetting(item.trim(), validators);
    if (typeof setting === 'string') throw new Error(`ledger --tpu-fault: ${setting}`);
    faults.set(setting);
  }
  return faults;
}

function qosSettings(config: SlipwayConfig) {
  return {
    unstakedStreams: config.tpuUnstakedStreams,
    stakedMaxStreams: config.tpuStakedMaxStreams,
    unstakedConnections: config.tpuUnstakedConnections,
    stakedConnections: config.tpuStakedConnections,
    connectionsPerIpPerMinute: config.tpuConnectionsPerIpPerMinute,
  };
}
