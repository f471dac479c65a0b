/**
 * `slipway ledger`: the embedded ledger as a standalone local cluster over HTTP (a Solana
 * JSON-RPC node and a Jito-style block engine), the way one uses a local test validator.
 */
import path from 'node:path';
import { resolveConfig } from '../config/config';
import { settingFlags, settingsFromFlags } from '../config/flags';
import { FaultInjector, parseFaultSetting } from '../ledger/fault-injector';
import { createLedgerNode } from '../ledger/ledger-node';
import { LocalLedger } from '../ledger/local-ledger';
import { parseOptions } from './parse-options';

const DEFAULT_PORT = 8899;

export async function runLedger(args: string[]): Promise<number> {
  const { values } = parseOptions('ledger', args, { ...settingFlags('ledger'), fault: { type: 'string' } });
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
    },
    ledgerDir,
  );
  const save = () => ledger.save(ledgerDir);
  ledger.onUnjournaledChange = save;
  const snapshots = setInterval(save, config.snapshotIntervalMs);
  snapshots.unref();
  ledger.start();
  const node = createLedgerNode({ ledger, faults, logLevel: config.logLevel });
  await node.listen({ host: config.host, port: config.port });
  const address = node.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  process.stdout.write(
    `slipway ledger: listening on ${url} (Solana JSON-RPC on /, block engine on /api/v1/bundles and /api/v1/transactions, data dir: ${config.dataDir})\n`,
  );

  await new Promise<void>((resolve) => {
    process.once('SIGTERM', () => resolve());
    process.once('SIGINT', () => resolve());
  });
  clearInterval(snapshots);
  await node.close();
  ledger.stop();
  save();
  return 0;
}
