import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { getCompiledTransactionMessageDecoder, getTransactionDecoder } from '@solana/kit';
import bs58 from 'bs58';
import { isWireDefect, parseWireTransaction } from '../../src/validation/wire-transaction';

/** A deterministic generator, so that a failure replays from its seed. */
function rng(seed: number) {
  let state = seed >>> 0 || 1;
  return (n: number) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
}

function shortVec(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>= 7;
    if (n > 0) byte |= 0x80;
    out.push(byte);
  } while (n > 0);
  return out;
}

/** A random legacy or v0 wire transaction that is valid by construction (sanitize passes). */
function randomTransaction(random: (n: number) => number): Buffer {
  const v0 = random(2) === 1;
  const keys = 2 + random(20);
  const signers = 1 + random(Math.min(4, keys - 1));
  const readonlySigned = random(signers);
  const readonlyUnsigned = random(keys - signers + 1);
  const lookups = v0 ? random(3) : 0;
  const tables = Array.from({ length: lookups }, () => {
    const writable = Array.from({ length: random(4) }, () => random(256));
    const readonly = Array.from({ length: (writable.length === 0 ? 1 : 0) + random(4) }, () => random(256));
    return { address: crypto.randomBytes(32), writable, readonly };
  });
  const loaded = tables.reduce((n, t) => n + t.writable.length + t.readonly.length, 0);
  const total = keys + loaded;
  const instructions = Array.from({ length: random(5) }, () => ({
    program: 1 + random(keys - 1),
    accounts: Array.from({ length: random(8) }, () => random(total)),
    data: crypto.randomBytes(random(300) === 0 ? 200 : random(40)),
  }));
  const bytes: number[] = [...shortVec(signers)];
  for (let i = 0; i < signers; i++) bytes.push(...crypto.randomBytes(64));
  if (v0) bytes.push(0x80);
  bytes.push(signers, readonlySigned, readonlyUnsigned, ...shortVec(keys));
  for (let i = 0; i < keys; i++) bytes.push(...crypto.randomBytes(32));
  bytes.push(...crypto.randomBytes(32), ...shortVec(instructions.length));
  for (const ix of instructions)
    bytes.push(ix.program, ...shortVec(ix.accounts.length), ...ix.accounts, ...shortVec(ix.data.length), ...ix.data);
  if (v0) {
    bytes.push(...shortVec(tables.length));
    for (const t of tables)
      bytes.push(...t.address, ...shortVec(t.writable.length), ...t.writable, ...shortVec(t.readonly.length), ...t.readonly);
  }
  return Buffer.from(bytes);
}

describe("wire parser against @solana/kit's decoder (differential, random transactions)", () => {
  it('agrees on every field it reads, over 5,000 random legacy and v0 transactions', () => {
    const seed = Number(process.env.SLIPWAY_TEST_SEED ?? 20261122);
    const random = rng(seed);
    const transactionDecoder = getTransactionDecoder();
    const messageDecoder = getCompiledTransactionMessageDecoder();
    let v0 = 0;
    for (let i = 0; i < 5000; i++) {
      const bytes = randomTransaction(random);
      const context = `seed ${seed}, transaction ${i}: ${bytes.toString('base64')}`;
      const ours = parseWireTransaction(bytes);
      assert.ok(!isWireDefect(ours), `${context}: ${JSON.stringify(ours)}`);
      const theirs = transactionDecoder.decode(bytes);
      const message = messageDecoder.decode(theirs.messageBytes) as any;
      assert.deepEqual(ours.message, Buffer.from(theirs.messageBytes), context);
      assert.deepEqual(
        ours.signatures.map((s) => bs58.encode(s)),
        Object.values(theirs.signatures).map((s) => bs58.encode(s as Uint8Array)),
        context,
      );
      assert.equal(ours.version, message.version === 'legacy' ? 'legacy' : 0, context);
      if (ours.version === 0) v0++;
      assert.equal(ours.numRequiredSignatures, message.header.numSignerAccounts, context);
      assert.equal(ours.numReadonlySigned, message.header.numReadonlySignerAccounts, context);
      assert.equal(ours.numReadonlyUnsigned, message.header.numReadonlyNonSignerAccounts, context);
      assert.deepEqual(
        ours.staticAccountKeys.map((k) => bs58.encode(k)),
        message.staticAccounts,
        context,
      );
      assert.equal(bs58.encode(ours.recentBlockhash), message.lifetimeToken, context);
      assert.deepEqual(
        ours.instructions.map((ix) => [ix.programIdIndex, [...ix.accountIndexes], Buffer.from(ix.data).toString('hex')]),
        message.instructions.map((ix: any) => [
          ix.programAddressIndex,
          ix.accountIndices ?? [],
          Buffer.from(ix.data ?? []).toString('hex'),
        ]),
        context,
      );
      assert.deepEqual(
        ours.addressTableLookups.map((l) => [bs58.encode(l.tableAddress), [...l.writableIndexes], [...l.readonlyIndexes]]),
        (message.addressTableLookups ?? []).map((l: any) => [l.lookupTableAddress, [...l.writableIndexes], [...l.readonlyIndexes]]),
        context,
      );
    }
    assert.ok(v0 > 2000 && v0 < 3000, `${v0} v0 transactions of 5000`);
  });
});
