/**
 * A local cluster for network-route tests: one embedded ledger served by several ledger
 * nodes (real HTTP servers on loopback), as several RPC nodes of one cluster would be,
 * each with its own fault injector and a log of the calls it received.
 */
import type { FastifyInstance } from 'fastify';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { JITO_TIP_ACCOUNTS } from '../../src/core/jito-tip-accounts';
import { FaultInjector, type FaultMode } from '../../src/ledger/fault-injector';
import { createLedgerNode, type Path } from '../../src/ledger/ledger-node';
import { LocalLedger, type LedgerConfig } from '../../src/ledger/local-ledger';

export interface ClusterNode {
  readonly url: string;
  readonly faults: FaultInjector;
  readonly calls: { path: Path; method: string }[];
  fault(mode: FaultMode, rate?: number): void;
}

export interface Cluster {
  readonly ledger: LocalLedger;
  readonly nodes: ClusterNode[];
  close(): Promise<void>;
}

export async function startCluster(nodeCount: number, slotMs = 50, ledgerConfig: Omit<LedgerConfig, 'slotMs'> = {}): Promise<Cluster> {
  const ledger = LocalLedger.open({ slotMs, ...ledgerConfig });
  ledger.start();
  const servers: FastifyInstance[] = [];
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < nodeCount; i++) {
    const faults = new FaultInjector();
    const calls: ClusterNode['calls'] = [];
    const server = createLedgerNode({ ledger, faults, logLevel: 'silent', observe: (path, method) => calls.push({ path, method }) });
    await server.listen({ host: '127.0.0.1', port: 0 });
    servers.push(server);
    const { port } = server.server.address() as { port: number };
    nodes.push({ url: `http://127.0.0.1:${port}`, faults, calls, fault: (mode, rate = 1) => faults.set({ mode, rate }) });
  }
  return {
    ledger,
    nodes,
    async close() {
      await Promise.all(servers.map((s) => s.close()));
      ledger.stop();
    },
  };
}

/** A signed transfer from `from` to a new account on the ledger's latest blockhash (Base64), with `tip` lamports to a block-engine tip account too. */
export function ledgerTransfer(ledger: LocalLedger, from: Keypair, lamports: number, tip = 0): string {
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: ledger.latestBlockhash().blockhash }).add(
    SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: Keypair.generate().publicKey, lamports }),
  );
  if (tip > 0)
    tx.add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: new PublicKey(JITO_TIP_ACCOUNTS[0]!), lamports: tip }));
  tx.sign(from);
  return tx.serialize().toString('base64');
}
