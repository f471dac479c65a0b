/** `slipway serve`: runs the gateway until SIGTERM or SIGINT, then shuts down gracefully. */
import { startApp } from '../app';
import { resolveConfig } from '../config/config';
import { settingFlags, settingsFromFlags } from '../config/flags';
import { setHeapGrowth } from '../runtime/heap-growth';
import { parseOptions } from './parse-options';

export async function runServe(args: string[]): Promise<number> {
  const { values } = parseOptions('serve', args, { ...settingFlags('serve'), config: { type: 'string' } });
  const config = resolveConfig({ ...settingsFromFlags('serve', values), config: values.config });
  setHeapGrowth(config.heapGrowthPercent);
  const app = await startApp(config);
  if (app.replayed > 0) {
    process.stderr.write(
      `slipway: recovered ${app.replayed} transaction(s) from the journal that the last run had not saved in the ledger\n`,
    );
  }
  if (app.initialKey !== null) {
    process.stdout.write(
      `created the first API key (${app.initialKey.id}, all permissions); it is shown only this once:\n` +
        `  ${app.initialKey.key}\n` +
        `make more with: bin/slipway keys create --name NAME [--bundle] --data-dir ${config.dataDir}\n`,
    );
  }
  const upstreams = Object.entries(config.network.upstreams).map(([name, u]) => (name === u.type ? name : `${name} (${u.type})`));
  process.stdout.write(`slipway: listening on ${app.url} (upstreams: ${upstreams.join(', ')}; data dir: ${config.dataDir})\n`);
  if (app.tpuIdentity !== undefined) {
    process.stdout.write(
      app.tpuIdentity.source === 'file'
        ? `slipway: TPU identity ${app.tpuIdentity.address} (from identityKeypair)\n`
        : `slipway: TPU identity ${app.tpuIdentity.address}, made for this run: unstaked, so leaders give it the least stream credit; set identityKeypair to send as a staked identity\n`,
    );
  }
  if (app.pubsubUrl !== undefined)
    process.stdout.write(`slipway: WebSocket subscriptions also on ${app.pubsubUrl}, where Solana clients look by default\n`);
  if (config.upstream === 'sink')
    process.stderr.write('slipway: WARNING: --upstream sink drops every transaction it accepts (a benchmarking aid)\n');
  if (!config.verifySignatures)
    process.stderr.write('slipway: signature verification is off (--verify-signatures false): only behind a trusted verifier\n');
  const local = [config.metricsToken === '' ? '/metrics' : null, config.dashboardToken === '' ? '/dashboard' : null].filter(
    (p) => p !== null,
  );
  if (local.length > 0) {
    process.stderr.write(
      `slipway: ${local.join(' and ')} answer this machine only (no ${config.metricsToken === '' ? 'metricsToken' : 'dashboardToken'}${local.length === 2 ? ' or dashboardToken' : ''}); ` +
        'a reverse proxy on this machine must add X-Forwarded-For or Forwarded (requests carrying them are refused there), or set the tokens (docs/DEPLOY.md)\n',
    );
  }

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.stderr.write(`slipway: ${signal} received, shutting down\n`);
      resolve();
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await app.close();
  return 0;
}
