/**
 * What one transaction costs at the edge, part by part, measured in isolation in this
 * process over distinct, validly signed transactions: JSON parse, Base64 decode, wire
 * parse, signature verification, journal write, and the embedded ledger's simulation and
 * execution for reference.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import bs58 from 'bs58';
import { LocalLedger } from '../src/ledger/local-ledger';
import { createSqliteJournal } from '../src/stores/journal';
import { decodeStrictBase64 } from '../src/validation/strict-base64';
import { validateTransaction, type ValidatedTransaction } from '../src/validation/validate-transaction';
import { verifyTransactionSignatures } from '../src/validation/verify-signatures';
import { isWireDefect, parseWireTransaction } from '../src/validation/wire-transaction';
import { newSigner, transferFactory } from './signed-transactions';

export interface CostPart {
  readonly name: string;
  readonly micros: number;
}

function microsPer(count: number, run: (i: number) => void): number {
  const started = performance.now();
  for (let i = 0; i < count; i++) run(i);
  return ((performance.now() - started) * 1000) / count;
}

export async function measureCostParts(count: number): Promise<CostPart[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-bench-'));
  try {
    const payer = newSigner();
    const ledger = LocalLedger.open({ slotMs: 400 });
    ledger.airdrop(payer.publicKey, 1_000_000_000_000n);
    const next = transferFactory(payer, newSigner().publicKey, Buffer.from(bs58.decode(ledger.latestBlockhash().blockhash)));
    const encoded = Array.from({ length: count }, next);
    const bodies = encoded.map((tx, i) =>
      JSON.stringify({ jsonrpc: '2.0', id: i, method: 'sendTransaction', params: [tx, { encoding: 'base64' }] }),
    );
    const bytes = encoded.map((tx) => Buffer.from(tx, 'base64'));
    const validated = encoded.map((tx) => {
      const result = validateTransaction(tx, '');
      if (!result.ok) throw new Error(result.error.message);
      return result.value;
    });
    const parts: CostPart[] = [
      { name: 'JSON parse of the request body', micros: microsPer(count, (i) => JSON.parse(bodies[i]!)) },
      { name: 'Base64 decode (strict)', micros: microsPer(count, (i) => decodeStrictBase64(encoded[i]!)) },
      { name: 'wire parse + sanitize', micros: microsPer(count, (i) => parseWireTransaction(bytes[i]!)) },
      {
        name: 'signature verification (ed25519)',
        micros: microsPer(count, (i) => {
          const wire = parseWireTransaction(bytes[i]!);
          if (!isWireDefect(wire)) verifyTransactionSignatures(wire);
        }),
      },
      { name: 'all edge checks (validateTransaction)', micros: microsPer(count, (i) => validateTransaction(encoded[i]!, '')) },
    ];
    const journal = createSqliteJournal(path.join(dir, 'journal.sqlite'));
    let started = performance.now();
    for (let i = 0; i < count; i++) {
      await journal.record({
        kind: 'transaction',
        keyId: 'bench',
        antiMev: false,
        bundleId: null,
        routes: ['sink'],
        transactions: [{ signature: validated[i]!.signature, wire: validated[i]!.wire.bytes, state: 'forwarded' }],
      });
    }
    parts.push({ name: 'journal write, one at a time (log; SQLite in bulk)', micros: ((performance.now() - started) * 1000) / count });
    started = performance.now();
    const batchSize = 32;
    for (let i = 0; i < count; i += batchSize) {
      await Promise.all(
        validated.slice(i, i + batchSize).map((tx) =>
          journal.record({
            kind: 'transaction',
            keyId: 'bench',
            antiMev: false,
            bundleId: null,
            routes: ['sink'],
            transactions: [{ signature: tx.signature, wire: tx.wire.bytes, state: 'forwarded' }],
          }),
        ),
      );
    }
    parts.push({ name: 'journal write, group-committed by 32', micros: ((performance.now() - started) * 1000) / count });
    await journal.close();
    const executable = Math.min(count, 500);
    parts.push({
      name: 'preflight simulation (LiteSVM)',
      micros: microsPer(executable, (i) => ledger.simulate(validated[i] as ValidatedTransaction)),
    });
    parts.push({ name: 'execution (LiteSVM)', micros: microsPer(executable, (i) => ledger.execute(validated[i] as ValidatedTransaction)) });
    return parts;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
