/**
 * `getTokenAccountBalance` on the local ledgers, in Agave's shape: a token account's amount
 * with its mint's decimals. SPL Token and Token-2022 accounts; Token-2022's interest-bearing
 * and scaled-amount extensions are not applied to `uiAmount` (the raw `amount` is exact).
 */
import bs58 from 'bs58';
import { invalidParams, isAnswer, parseAddress, withContext, type Method } from './rpc-shapes';

const TOKEN_PROGRAMS = new Set(['TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA', 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb']);
/** SPL Token's account layout: mint (32), owner (32), amount (u64), …; 165 bytes in all. */
const TOKEN_ACCOUNT_LENGTH = 165;
const AMOUNT_OFFSET = 64;
/** The account's state (0: uninitialized); Token-2022 puts the account type (2: account) after the base layout. */
const STATE_OFFSET = 108;
const ACCOUNT_TYPE_ACCOUNT = 2;
/** Its mint layout: mint authority option (36), supply (8), decimals (1), …; 82 bytes in all. */
const MINT_LENGTH = 82;
const DECIMALS_OFFSET = 44;

/** Agave's `real_number_string_trimmed`: the amount with its decimal point, trailing zeros dropped. */
export function uiAmountString(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const digits = amount.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

export const TOKEN_RPC_METHODS: Record<string, Method> = {
  getTokenAccountBalance: (ledger, params) => {
    const address = parseAddress(params[0]);
    if (isAnswer(address)) return address;
    const account = ledger.getAccount(address);
    if (account === null) return invalidParams('Invalid param: could not find account');
    if (!TOKEN_PROGRAMS.has(bs58.encode(account.owner)) || account.data.length < TOKEN_ACCOUNT_LENGTH)
      return invalidParams('Invalid param: not a Token account');
    const data = Buffer.from(account.data);
    if (data[STATE_OFFSET] === 0 || (data.length > TOKEN_ACCOUNT_LENGTH && data[TOKEN_ACCOUNT_LENGTH] !== ACCOUNT_TYPE_ACCOUNT))
      return invalidParams('Invalid param: not a Token account');
    const mint = ledger.getAccount(data.subarray(0, 32));
    if (mint === null) return invalidParams('Invalid param: could not find mint');
    if (mint.data.length < MINT_LENGTH || !TOKEN_PROGRAMS.has(bs58.encode(mint.owner)))
      return invalidParams('Invalid param: mint could not be unpacked');
    const amount = data.readBigUInt64LE(AMOUNT_OFFSET);
    const decimals = mint.data[DECIMALS_OFFSET]!;
    return withContext(ledger, {
      amount: amount.toString(),
      decimals,
      uiAmount: Number(amount) / 10 ** decimals,
      uiAmountString: uiAmountString(amount, decimals),
    });
  },
};
