/**
 * The three gateways of the landing step, one Slipway process per route, each in front of
 * the same local cluster: what its configuration file says, and the transfers its payer
 * signs (the Jito route's pay their own tip, as Jito asks of `sendTransaction`).
 */
import fs from 'node:fs';
import path from 'node:path';
import bs58 from 'bs58';
import { JITO_TIP_ACCOUNTS } from '../src/core/jito-tip-accounts';
import { startSlipway, type ServerProcess } from './processes';
import { tippedTransferFactory, transferFactory, type Signer } from './signed-transactions';

export type RouteName = 'rpc' | 'jito' | 'tpu';
export const ROUTE_NAMES: readonly RouteName[] = ['rpc', 'jito', 'tpu'];
/** A gateway with one route, or with all three (each transaction to the node, the engine and the leaders). */
export type GatewayKind = RouteName | 'all';

/**
 * The jito upstream's `minTipLamports` default (Jito's former minimum): a transaction that tips
 * this much is sent `bundleOnly` (it lands whole, in the auction).
 */
export const TIP_LAMPORTS = 1_000;

/** What each route's sendTransaction goes through, in words (the report says it). */
export const ROUTE_DESCRIPTIONS: Record<RouteName, string> = {
  rpc: "RPC fan-out: an rpc upstream on the node's / (the node forwards to the upcoming leaders)",
  jito: "Jito: a jito upstream on the node's /api/v1 (the block engine), tip of 1,000 lamports, reads from the node",
  tpu: 'TPU: a tpu upstream on the node (QUIC to the leaders of the current slot and the next three)',
};

/** The configuration file of `route`'s gateway: sendTransaction through that route (or all of them), reads from the node. */
export function gatewayConfig(route: GatewayKind, nodeUrl: string): object {
  switch (route) {
    case 'all':
      return {
        upstreams: {
          node: { type: 'rpc', urls: [nodeUrl] },
          engine: { type: 'jito', urls: [`${nodeUrl}/api/v1`] },
          leaders: { type: 'tpu', urls: [nodeUrl] },
        },
        routes: {
          sendTransaction: ['node', 'engine', 'leaders'],
          submitBatch: ['node', 'engine', 'leaders'],
          sendBundle: ['engine'],
          antiMev: ['engine', 'leaders'],
          reads: 'node',
        },
      };
    case 'rpc':
      return {
        upstreams: { node: { type: 'rpc', urls: [nodeUrl] } },
        routes: { sendTransaction: ['node'], submitBatch: ['node'], sendBundle: [], antiMev: [], reads: 'node' },
      };
    case 'jito':
      return {
        upstreams: { node: { type: 'rpc', urls: [nodeUrl] }, engine: { type: 'jito', urls: [`${nodeUrl}/api/v1`] } },
        routes: { sendTransaction: ['engine'], submitBatch: ['engine'], sendBundle: ['engine'], antiMev: ['engine'], reads: 'node' },
      };
    case 'tpu':
      return {
        upstreams: { leaders: { type: 'tpu', urls: [nodeUrl] } },
        routes: { sendTransaction: ['leaders'], submitBatch: ['leaders'], sendBundle: [], antiMev: ['leaders'], reads: 'leaders' },
      };
  }
}

/** The data directory of `route`'s gateway under `dir` (keys may be created there before it starts). */
export function gatewayDir(route: GatewayKind, dir: string): string {
  const dataDir = path.join(dir, `gateway-${route}`);
  fs.mkdirSync(dataDir, { recursive: true });
  return dataDir;
}

/** Starts `route`'s gateway in its own process, its data and configuration under `dir`. */
export function startGateway(route: GatewayKind, nodeUrl: string, dir: string): Promise<ServerProcess> {
  const dataDir = gatewayDir(route, dir);
  const configFile = path.join(dataDir, 'slipway.config.json');
  fs.writeFileSync(configFile, JSON.stringify(gatewayConfig(route, nodeUrl), null, 2));
  return startSlipway(dataDir, ['--config', configFile]);
}

/**
 * Signed Base64 transfers from `payer` to `recipient` with `blockhash`, distinct amounts
 * from `firstLamports`; on the Jito route each also tips one of the tip accounts.
 */
export function routeTransfers(route: RouteName, payer: Signer, recipient: Buffer, blockhash: Buffer, firstLamports: number) {
  if (route !== 'jito') return transferFactory(payer, recipient, blockhash, firstLamports);
  const tipAccount = Buffer.from(bs58.decode(JITO_TIP_ACCOUNTS[0]!));
  return tippedTransferFactory(payer, recipient, tipAccount, TIP_LAMPORTS, blockhash, firstLamports);
}
