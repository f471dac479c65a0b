/** Signed transfers as wire transactions, for the verifiers' tests: valid, forged and unsigned ones mixed. */
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { isWireDefect, parseWireTransaction, type WireTransaction } from '../../src/validation/wire-transaction';

/** `count` transfers, one or two signers; every third spoilt (a flipped bit), every fifth with a blank second signature. */
export function transfers(count: number, spoil: boolean): WireTransaction[] {
  const payer = Keypair.generate();
  const other = Keypair.generate();
  const wires: WireTransaction[] = [];
  for (let i = 0; wires.length < count; i++) {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: bs58.encode(Buffer.alloc(32, i % 251)) }).add(
      SystemProgram.transfer({ fromPubkey: i % 2 === 0 ? payer.publicKey : other.publicKey, toPubkey: payer.publicKey, lamports: i + 1 }),
    );
    if (spoil && i % 5 === 0 && i % 2 === 1) tx.partialSign(payer);
    else tx.sign(...(i % 2 === 0 ? [payer] : [payer, other]));
    const bytes = tx.serialize({ requireAllSignatures: false });
    if (spoil && i % 3 === 0) bytes[1 + ((i * 31) % (bytes.length - 1))]! ^= 1 << (i % 8);
    const wire = parseWireTransaction(bytes);
    if (!isWireDefect(wire)) wires.push(wire);
  }
  return wires;
}
