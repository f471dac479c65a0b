import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { Keypair, SystemProgram, Transaction, TransactionMessage, VersionedTransaction, AddressLookupTableAccount } from '@solana/web3.js';
import bs58 from 'bs58';
import { decodeStrictBase64, findBase64Defect } from '../../src/validation/strict-base64';
import { parseTransaction, validateTransaction } from '../../src/validation/validate-transaction';
import { verifyTransactionSignatures } from '../../src/validation/verify-signatures';
import { isWireDefect, parseWireTransaction, usesDurableNonce, type WireTransaction } from '../../src/validation/wire-transaction';

const BLOCKHASH = bs58.encode(crypto.randomBytes(32));

function legacyTransfer(signers = [Keypair.generate()], extraSigner?: Keypair): Transaction {
  const payer = signers[0]!;
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: BLOCKHASH }).add(
    SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 42 }),
  );
  if (extraSigner) tx.add(SystemProgram.transfer({ fromPubkey: extraSigner.publicKey, toPubkey: payer.publicKey, lamports: 1 }));
  tx.sign(...signers, ...(extraSigner ? [extraSigner] : []));
  return tx;
}

function v0WithLookup(): VersionedTransaction {
  const payer = Keypair.generate();
  const looked = Keypair.generate().publicKey;
  const table = new AddressLookupTableAccount({
    key: Keypair.generate().publicKey,
    state: {
      deactivationSlot: BigInt('18446744073709551615'),
      lastExtendedSlot: 0,
      lastExtendedSlotStartIndex: 0,
      authority: undefined,
      addresses: [looked],
    },
  });
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: BLOCKHASH,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: looked, lamports: 7 })],
  }).compileToV0Message([table]);
  const tx = new VersionedTransaction(message);
  tx.sign([payer]);
  return tx;
}

function parsed(bytes: Buffer): WireTransaction {
  const tx = parseWireTransaction(bytes);
  assert.ok(!isWireDefect(tx), `expected a transaction, got ${JSON.stringify(tx)}`);
  return tx;
}

describe('wire transaction parser (cross-checked against @solana/web3.js)', () => {
  it('reads a legacy transaction as web3.js does', () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const tx = legacyTransfer([payer], other);
    const bytes = tx.serialize();
    const wire = parsed(bytes);
    const reference = VersionedTransaction.deserialize(bytes);
    assert.equal(wire.version, 'legacy');
    assert.equal(wire.signatures.length, 2);
    assert.deepEqual(
      wire.signatures.map((s) => bs58.encode(s)),
      reference.signatures.map((s) => bs58.encode(s)),
    );
    assert.deepEqual(
      wire.staticAccountKeys.map((k) => bs58.encode(k)),
      reference.message.staticAccountKeys.map((k) => k.toBase58()),
    );
    assert.equal(bs58.encode(wire.recentBlockhash), reference.message.recentBlockhash);
    assert.equal(wire.numRequiredSignatures, reference.message.header.numRequiredSignatures);
    assert.equal(wire.numReadonlyUnsigned, reference.message.header.numReadonlyUnsignedAccounts);
    assert.deepEqual(wire.message, Buffer.from(reference.message.serialize()));
    assert.deepEqual(
      wire.instructions.map((ix) => ({ p: ix.programIdIndex, a: [...ix.accountIndexes], d: bs58.encode(ix.data) })),
      reference.message.compiledInstructions.map((ix) => ({ p: ix.programIdIndex, a: ix.accountKeyIndexes, d: bs58.encode(ix.data) })),
    );
  });

  it('reads a v0 transaction with an address lookup table as web3.js does', () => {
    const tx = v0WithLookup();
    const bytes = Buffer.from(tx.serialize());
    const wire = parsed(bytes);
    assert.equal(wire.version, 0);
    assert.equal(wire.addressTableLookups.length, 1);
    const reference = tx.message.addressTableLookups[0]!;
    assert.equal(bs58.encode(wire.addressTableLookups[0]!.tableAddress), reference.accountKey.toBase58());
    assert.deepEqual([...wire.addressTableLookups[0]!.writableIndexes], reference.writableIndexes);
    assert.deepEqual(wire.message, Buffer.from(tx.message.serialize()));
  });

  it('refuses a shortvec that is not canonical or longer than 3 bytes', () => {
    const bytes = legacyTransfer().serialize();
    // 0x81 0x00 encodes 1 in two bytes: an alias that Solana refuses.
    const alias = Buffer.concat([Buffer.from([0x81, 0x00]), bytes.subarray(1)]);
    const result = parseWireTransaction(alias);
    assert.ok(isWireDefect(result));
    assert.match(result.detail, /non-canonical/);
    const long = parseWireTransaction(Buffer.from([0xff, 0xff, 0xff, 0x01]));
    assert.ok(isWireDefect(long));
    assert.match(long.detail, /more than 3 bytes/);
  });

  it('refuses truncated bytes, trailing bytes and unknown versions', () => {
    const bytes = legacyTransfer().serialize();
    for (const cut of [1, 64, 65, 70, bytes.length - 1]) {
      const result = parseWireTransaction(bytes.subarray(0, cut));
      assert.ok(isWireDefect(result), `cut at ${cut}`);
      assert.equal(result.stage, 'deserialize');
    }
    const trailing = parseWireTransaction(Buffer.concat([bytes, Buffer.from([0])]));
    assert.ok(isWireDefect(trailing));
    assert.match(trailing.detail, /1 trailing bytes/);
    const v1 = Buffer.from(v0WithLookup().serialize());
    v1[65] = 0x81; // version 1 prefix after one signature
    const version = parseWireTransaction(v1);
    assert.ok(isWireDefect(version));
    assert.match(version.detail, /unsupported transaction message version 1/);
  });

  it('sanitizes: signature count, program index, account index, duplicate keys', () => {
    const bytes = legacyTransfer().serialize();
    const noSignature = Buffer.concat([Buffer.from([0]), bytes.subarray(65)]);
    const missing = parseWireTransaction(noSignature);
    assert.ok(isWireDefect(missing));
    assert.equal(missing.stage, 'signatures');
    assert.match(missing.detail, /requires 1 signature\(s\) but 0 are present/);

    const messageStart = 65; // after one signature and its count
    const keysCount = bytes[messageStart + 3]!;
    const instructionStart = messageStart + 4 + keysCount * 32 + 32 + 1;
    const badProgram = Buffer.from(bytes);
    badProgram[instructionStart] = 0; // the fee payer as program
    const program = parseWireTransaction(badProgram);
    assert.ok(isWireDefect(program));
    assert.equal(program.stage, 'sanitize');
    assert.match(program.detail, /program index 0/);

    const badAccount = Buffer.from(bytes);
    badAccount[instructionStart + 2] = 99; // first account index of the instruction
    const account = parseWireTransaction(badAccount);
    assert.ok(isWireDefect(account));
    assert.match(account.detail, /account index 99 is out of range/);

    const duplicate = Buffer.from(bytes);
    bytes.copy(duplicate, messageStart + 4 + 32, messageStart + 4, messageStart + 4 + 32); // key 1 := key 0
    const twice = parseWireTransaction(duplicate);
    assert.ok(isWireDefect(twice));
    assert.match(twice.detail, /listed twice/);
  });

  it('recognises durable-nonce transactions by their first instruction', () => {
    const payer = Keypair.generate();
    const nonce = Keypair.generate().publicKey;
    const tx = new Transaction({
      feePayer: payer.publicKey,
      nonceInfo: {
        nonce: BLOCKHASH,
        nonceInstruction: SystemProgram.nonceAdvance({ noncePubkey: nonce, authorizedPubkey: payer.publicKey }),
      },
    });
    tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: nonce, lamports: 1 }));
    tx.sign(payer);
    assert.equal(usesDurableNonce(parsed(tx.serialize())), true);
    assert.equal(usesDurableNonce(parsed(legacyTransfer().serialize())), false);
  });
});

describe('strict Base64', () => {
  it('agrees with a canonical round trip on random inputs', () => {
    for (let i = 0; i < 2000; i++) {
      const bytes = crypto.randomBytes(i % 50);
      const good = bytes.toString('base64');
      assert.equal(findBase64Defect(good), null);
      const mutated = good.split('');
      const at = i % Math.max(1, mutated.length);
      if (mutated.length > 0) mutated[at] = '!#-_ .'[i % 6]!;
      const bad = mutated.join('');
      const canonical = Buffer.from(bad, 'base64').toString('base64') === bad;
      assert.equal(findBase64Defect(bad) === null, canonical, `input ${JSON.stringify(bad)}`);
    }
  });

  it('decodeStrictBase64 accepts exactly what findBase64Defect does (last-symbol bits, misplaced padding, bad bytes), and decodes it', () => {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=!-_ \n';
    for (let i = 0; i < 5000; i++) {
      const good = crypto.randomBytes(i % 40).toString('base64');
      const chars = good.split('');
      // One to three characters replaced from the alphabet, padding and a few outsiders: last-symbol bits, misplaced padding, bad bytes.
      for (let k = 0; k <= i % 3 && chars.length > 0; k++)
        chars[(i * 7 + k * 13) % chars.length] = alphabet[(i * 11 + k) % alphabet.length]!;
      const text = i % 10 === 0 ? good.slice(0, i % (good.length + 1)) : chars.join('');
      const decoded = decodeStrictBase64(text);
      const defect = findBase64Defect(text);
      assert.equal(decoded.ok, defect === null, `input ${JSON.stringify(text)}`);
      if (decoded.ok) assert.ok(decoded.value.equals(Buffer.from(text, 'base64')));
      else assert.equal(decoded.error.message, `invalid base64 encoding: ${defect}`);
    }
  });

  it('names the defect as the base64 crate does', () => {
    assert.equal(findBase64Defect('AAA!'), 'InvalidByte(3, 33)');
    assert.equal(findBase64Defect('AAAAA'), 'InvalidLength');
    assert.equal(findBase64Defect('AB=='), 'InvalidLastSymbol(1, 66)');
    assert.equal(findBase64Defect('AAAA\n'), 'InvalidByte(4, 10)');
  });
});

describe('signature verification (cross-checked against node:crypto ed25519)', () => {
  function nodeVerify(wire: WireTransaction): boolean {
    return wire.signatures.every((signature, i) => {
      const key = crypto.createPublicKey({
        key: { kty: 'OKP', crv: 'Ed25519', x: wire.staticAccountKeys[i]!.toString('base64url') },
        format: 'jwk',
      });
      return crypto.verify(null, wire.message, key, signature);
    });
  }

  it('accepts exactly what node:crypto accepts, over random byte flips', () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const bytes = legacyTransfer([payer], other).serialize();
    let agreed = 0;
    for (let i = 0; i < 300; i++) {
      const copy = Buffer.from(bytes);
      if (i > 0) copy[1 + ((i * 7919) % (copy.length - 1))]! ^= 1 << (i % 8);
      const wire = parseWireTransaction(copy);
      if (isWireDefect(wire)) continue;
      assert.equal(verifyTransactionSignatures(wire).valid, nodeVerify(wire), `flip ${i}`);
      agreed++;
    }
    assert.ok(agreed > 100);
    assert.equal(verifyTransactionSignatures(parsed(bytes)).valid, true);
  });

  it('reports the first bad signature and whether it was left empty', () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: BLOCKHASH }).add(
      SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: payer.publicKey, lamports: 1 }),
    );
    tx.partialSign(payer);
    const bytes = tx.serialize({ requireAllSignatures: false });
    const check = verifyTransactionSignatures(parsed(bytes));
    assert.deepEqual(check, { valid: false, index: 1, empty: true });
    const result = validateTransaction(bytes.toString('base64'), 'transaction 3 (params[0][2])');
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.error.kind, 'SIGNATURE_VERIFICATION_FAILURE');
    assert.equal(
      result.error.message,
      `transaction 3 (params[0][2]): Transaction signature verification failure: signature 1 (signer ${other.publicKey.toBase58()}) is empty: the transaction is not fully signed`,
    );
  });
});

describe('validateTransaction (Agave order and messages)', () => {
  it('checks the encoded length before decoding', () => {
    const result = validateTransaction('!'.repeat(1645), '');
    assert.ok(!result.ok);
    assert.equal(
      result.error.message,
      'base64 encoded solana_transaction::versioned::VersionedTransaction too large: 1645 bytes (max: encoded/raw 1644/1232)',
    );
  });

  it('checks the decoded size before deserializing', () => {
    const result = validateTransaction(Buffer.alloc(1233).toString('base64').slice(0, 1644), '');
    assert.ok(!result.ok);
    assert.equal(
      result.error.message,
      'decoded solana_transaction::versioned::VersionedTransaction too large: 1233 bytes (max: 1232 bytes)',
    );
  });

  it('returns the first signature in base58 as the transaction ID', () => {
    const tx = legacyTransfer();
    const result = validateTransaction(tx.serialize().toString('base64'), '');
    assert.ok(result.ok);
    assert.equal(result.value.signature, bs58.encode(tx.signature!));
  });

  it('refuses a forged copy that reuses a known first signature', () => {
    const tx = legacyTransfer();
    const bytes = tx.serialize();
    const good = validateTransaction(bytes.toString('base64'), '');
    assert.ok(good.ok);
    const known = { has: (digest: Buffer) => digest.equals(good.value.digest) };
    const forged = Buffer.from(bytes);
    forged[forged.length - 1]! ^= 1; // lamports of the transfer changed
    const result = validateTransaction(forged.toString('base64'), '', known);
    assert.ok(!result.ok);
    assert.equal(result.error.kind, 'SIGNATURE_VERIFICATION_FAILURE');
    const again = parseTransaction(bytes.toString('base64'), '', known);
    assert.ok(again.ok);
    assert.equal(again.value.verified, true, 'the same bytes skip verification');
    assert.equal(again.value.tx.signature, good.value.signature);
  });
});
