/**
 * The composition root: the only place where concrete stores, the ledger and upstreams
 * meet. It builds them from the configuration, recovers what a crash left, wires the
 * pipeline and the HTTP server, and owns the order of shutdown.
 */
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { createAuthenticator } from './auth/authenticator';
import type { SlipwayConfig } from './config';
import { dataPaths } from './config';
import { createHttpServer } from './http/server';
import { LocalLedger } from './ledger/local-ledger';
import { replayJournal } from './ledger/recover-ledger';
import { RecentTransactions } from './pipeline/recent-transactions';
import { createRouter } from './pipeline/router';
import { createSubmissionPipeline } from './pipeline/submission-pipeline';
import { createSqliteJournal } from './stores/journal-sqlite';
import { createSqliteKeyStore } from './stores/key-store-sqlite';
import { createEmbeddedLedgerUpstream } from './upstreams/embedded-ledger';
import { restoreValidatedTransaction } from './validation/validate-transaction';

export interface RunningApp {
  /** `http://host:port` the server listens on. */
  readonly url: string;
  readonly server: FastifyInstance;
  readonly ledger: LocalLedger;
  /** The key created on first start with an empty key store, shown once. */
  readonly initialKey: { id: string; key: string } | null;
  /** Transactions replayed from the journal into the embedded ledger at start (after a crash). */
  readonly replayed: number;
  /** Stops accepting, finishes in-flight requests, saves the ledger, closes the stores. */
  close(): Promise<void>;
}

export async function startApp(config: SlipwayConfig): Promise<RunningApp> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const paths = dataPaths(config.dataDir);

  const keyStore = createSqliteKeyStore(paths.keys);
  let initialKey: RunningApp['initialKey'] = null;
  if ((await keyStore.list()).length === 0) {
    const created = await keyStore.create({ name: 'initial', bundle: true });
    initialKey = { id: created.record.id, key: created.key };
  }
  const authenticator = await createAuthenticator(keyStore);

  const journal = createSqliteJournal(paths.journal, { synchronous: config.journalSync });
  const ledger = LocalLedger.open({ slotMs: config.slotMs }, paths.ledger);
  const { lastSeq, replayed } = await replayJournal(ledger, journal);

  const recent = new RecentTransactions(config.duplicateTtlMs);
  for (const entry of await journal.since(Date.now() - config.duplicateTtlMs)) {
    if (entry.status === 'rejected') continue;
    for (const tx of entry.transactions) recent.remember(restoreValidatedTransaction(tx.wire));
  }

  const upstream = createEmbeddedLedgerUpstream(ledger);
  const router = createRouter([upstream]);
  const pipeline = createSubmissionPipeline({ router, journal, recent, duplicateTtlMs: config.duplicateTtlMs, initialSeq: lastSeq });
  const server = createHttpServer({ authenticator, pipeline, router, recent, bundleResult: config.bundleResult, logLevel: config.logLevel });

  const saveLedger = () => {
    ledger.journalSeq = pipeline.handedOverWatermark();
    ledger.save(paths.ledger);
  };
  saveLedger();
  ledger.onUnjournaledChange = saveLedger;
  const snapshots = setInterval(saveLedger, config.snapshotIntervalMs);
  snapshots.unref();
  ledger.start();

  await server.listen({ host: config.host, port: config.port });
  const address = server.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    ledger,
    initialKey,
    replayed,
    close() {
      closing ??= (async () => {
        await server.close();
        clearInterval(snapshots);
        await upstream.close();
        saveLedger();
        authenticator.close();
        await journal.close();
        await keyStore.close();
      })();
      return closing;
    },
  };
}
