/**
 * Yellowstone Shield policies: a validator policy kept on chain, in an account of the
 * Shield program, so that operators can reuse the public ones. The account holds a header
 * and then the identities, 32 bytes each:
 *
 *   Policy   (kind 0): u8 kind, u8 strategy, u8 nonce, u32 identity count          (7 bytes)
 *   PolicyV2 (kind 1): u8 kind, u8 strategy, u8 nonce, 32-byte mint, u32 count    (39 bytes)
 *
 * strategy 0 is Deny (the identities are not trusted), 1 is Allow (only they are). The
 * account is read with `getAccountInfo` through the reads upstream, every refresh.
 */
import bs58 from 'bs58';
import type { RpcAnswer } from '../upstreams/upstream';
import { createPolicySource, PolicyFetchError, type PolicySource, type ValidatorPolicy } from './validator-policy';

export const SHIELD_PROGRAM_ID = 'b1ockYL7X6sGtJzueDbxRVBEEPN4YeqoLW276R3MX8W';

const HEADER_BYTES: Record<number, number> = { 0: 7, 1: 39 };

/** The policy an account's data holds; throws saying what is wrong with it. */
export function parseShieldPolicy(data: Buffer, owner: string): ValidatorPolicy {
  if (owner !== SHIELD_PROGRAM_ID) throw new Error(`the account is owned by ${owner}, not by the Shield program ${SHIELD_PROGRAM_ID}`);
  const header = HEADER_BYTES[data[0] ?? -1];
  if (header === undefined || data.length < header)
    throw new Error(`the account is not a Shield policy (kind ${data[0] ?? 'missing'}, ${data.length} bytes)`);
  const strategy = data[1];
  if (strategy !== 0 && strategy !== 1) throw new Error(`the policy's strategy ${strategy} is neither Deny (0) nor Allow (1)`);
  const count = data.readUInt32LE(header - 4);
  if (header + count * 32 > data.length)
    throw new Error(`the policy says it lists ${count} identities but holds ${Math.floor((data.length - header) / 32)}`);
  const identities = new Set<string>();
  for (let i = 0; i < count; i++) identities.add(bs58.encode(data.subarray(header + i * 32, header + (i + 1) * 32)));
  return strategy === 0 ? { allows: (id) => !identities.has(id) } : { allows: (id) => identities.has(id) };
}

/** The bytes of a Shield policy account listing `identities` (PolicyV2): for tests and ledgers that load one. */
export function encodeShieldPolicy(
  strategy: 'deny' | 'allow',
  identities: readonly string[],
  mint: Uint8Array = new Uint8Array(32),
): Buffer {
  const data = Buffer.alloc(39 + identities.length * 32);
  data[0] = 1;
  data[1] = strategy === 'deny' ? 0 : 1;
  Buffer.from(mint).copy(data, 3);
  data.writeUInt32LE(identities.length, 35);
  identities.forEach((id, i) => Buffer.from(bs58.decode(id)).copy(data, 39 + i * 32));
  return data;
}

export function createShieldPolicySource(
  address: string,
  call: (method: string, params: readonly unknown[]) => Promise<RpcAnswer | undefined>,
  options: { refreshMs?: number; staleMs?: number } = {},
): PolicySource {
  return createPolicySource(
    `the Shield policy ${address}`,
    async () => {
      let answer: RpcAnswer | undefined;
      try {
        answer = await call('getAccountInfo', [address, { encoding: 'base64', commitment: 'confirmed' }]);
      } catch (error) {
        throw new PolicyFetchError(error instanceof Error ? error.message : String(error));
      }
      if (answer === undefined) throw new Error('the reads upstream does not answer getAccountInfo');
      if ('error' in answer) throw new PolicyFetchError(`getAccountInfo: ${answer.error.message}`);
      const account = (answer.result as { value: { data: [string, string]; owner: string } | null }).value;
      if (account === null) throw new Error('no such account');
      return parseShieldPolicy(Buffer.from(account.data[0], 'base64'), account.owner);
    },
    options,
  );
}
