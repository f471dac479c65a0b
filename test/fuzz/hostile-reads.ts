/**
 * Read methods with hostile parameters, and JSON-RPC batches mixing everything, generated
 * with fast-check from a seed. Each read method gets its own parameter shapes, then wrong
 * types in every place: invalid and wrong-length public keys, objects where strings go,
 * huge arrays, odd encodings and commitments, numbers past u64 or not integers, config
 * objects with every field mistyped; methods the gateway does not forward as well (they
 * must be refused, never passed through). Batches mix reads, hostile requests of every
 * kind (hostile-requests.ts), real sends, notifications and non-objects, up to past the
 * batch limit.
 */
import bs58 from 'bs58';
import fc from 'fast-check';
import { hostileRpcObject } from './hostile-requests';

export interface ReadRequest {
  readonly kind: string;
  readonly path: string;
  readonly body: Buffer;
}

export interface ReadContext {
  readonly validTransactions: readonly string[];
  /** Signatures (base58) of transactions that landed, and funded accounts: reads of real things, not only of nothing. */
  readonly knownSignatures: readonly string[];
  readonly knownAccounts: readonly string[];
}

const SYSTEM = [
  '11111111111111111111111111111111',
  'SysvarC1ock11111111111111111111111111111111',
  'SysvarRent111111111111111111111111111111111',
  'Vote111111111111111111111111111111111111111',
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  '96gYZGLnJYVFmbjzopPSU6QiEV5fGqZNyN9nmNhvrZU5',
];

/** Every method a client might call for reading; the gateway forwards some, serves its own statuses, refuses the rest. */
const METHOD_SHAPES = [
  'getBalance',
  'getAccountInfo',
  'getMultipleAccounts',
  'getProgramAccounts',
  'getLatestBlockhash',
  'isBlockhashValid',
  'getBlockHeight',
  'getSlot',
  'getEpochInfo',
  'getMinimumBalanceForRentExemption',
  'getFeeForMessage',
  'getRecentPrioritizationFees',
  'getTransaction',
  'simulateTransaction',
  'getVersion',
  'getHealth',
  'getTipAccounts',
  'requestAirdrop',
  'getSignatureStatuses',
  'getBundleStatuses',
  'getInflightBundleStatuses',
  'getSubmissionStatuses',
  'getSubmission',
  'getLandingReport',
  'getPriorityFeeEstimate',
  'getLandingEstimate',
  'getSlotLeaders',
  'getLeaderSchedule',
  'getBlock',
  'getTransactionExposure',
  'getTokenAccountsByOwner',
  'getSignaturesForAddress',
  'getLargestAccounts',
  'getSupply',
  'getClusterNodes',
  'getBlocks',
  'minimumLedgerSlot',
] as const;

export function readArbitraries(context: ReadContext) {
  const anything = fc.anything({ maxDepth: 3, maxKeys: 5, withBigInt: false });
  const wrongType = fc.oneof(
    fc.constantFrom(null, true, 0, -1, 1.5, 1e300, '', [], {}, { toString: 'x' }, ['11111111111111111111111111111111']),
    anything,
  );
  const pubkey = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...SYSTEM, ...context.knownAccounts) },
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bs58.encode(b)) },
    fc.uint8Array({ minLength: 0, maxLength: 64 }).map((b) => bs58.encode(b)),
    fc.constantFrom('0OIl', ' 11111111111111111111111111111111', '1'.repeat(10_000), '\u0000', '11111111111111111111111111111111\n'),
    fc.string({ unit: 'grapheme', maxLength: 50 }),
    wrongType,
  );
  const signature = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...context.knownSignatures) },
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => bs58.encode(b)) },
    fc.uint8Array({ maxLength: 100 }).map((b) => bs58.encode(b)),
    fc.constantFrom('', '1'.repeat(100), 'z'.repeat(5_000)),
    wrongType,
  );
  const transaction = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...context.validTransactions) },
    fc.base64String({ maxLength: 1_000 }),
    fc.constantFrom('', 'AAAA', 'AQ=='),
    wrongType,
  );
  const number = fc.oneof(
    fc.nat(10_000),
    fc.constantFrom(0, -1, 1.5, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e19, 1e300, -1e300, Number.MAX_VALUE, Number.MIN_VALUE, '5', '0x10', null),
    wrongType,
  );
  const encoding = fc.oneof(
    fc.constantFrom('base64', 'base58', 'json', 'jsonParsed', 'base64+zstd', 'binary', '', 'BASE64', 'toString', '__proto__'),
    wrongType,
  );
  const commitment = fc.oneof(
    fc.constantFrom('processed', 'confirmed', 'finalized', 'recent', 'max', 'root', 'single', 'toString', ''),
    wrongType,
  );
  const config = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        {
          commitment,
          encoding,
          dataSlice: fc.oneof(fc.record({ offset: number, length: number }, { requiredKeys: [] }), wrongType),
          minContextSlot: number,
          maxSupportedTransactionVersion: fc.oneof(fc.constantFrom(0, 1, -1, null), wrongType),
          filters: fc.oneof(
            fc.array(
              fc.oneof(
                fc.record({ dataSize: number }),
                fc.record({ memcmp: fc.record({ offset: number, bytes: fc.oneof(fc.string(), wrongType) }) }),
                wrongType,
              ),
              { maxLength: 5 },
            ),
            wrongType,
          ),
          withContext: fc.oneof(fc.boolean(), wrongType),
          sigVerify: fc.oneof(fc.boolean(), wrongType),
          replaceRecentBlockhash: fc.oneof(fc.boolean(), wrongType),
          searchTransactionHistory: fc.oneof(fc.boolean(), wrongType),
          transactionDetails: fc.oneof(fc.constantFrom('full', 'signatures', 'none', 'accounts'), wrongType),
          rewards: fc.oneof(fc.boolean(), wrongType),
          identity: fc.oneof(pubkey, wrongType),
          accounts: fc.oneof(fc.record({ addresses: fc.array(pubkey, { maxLength: 4 }), encoding }, { requiredKeys: [] }), wrongType),
        },
        { requiredKeys: [] },
      ),
    },
    fc.constantFrom(undefined, null, 'confirmed', 'base64', 5, [], {}),
    anything,
  );
  const array = <T>(item: fc.Arbitrary<T>) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.array(item, { maxLength: 12 }) },
      fc.integer({ min: 100, max: 1_500 }).chain((n) => fc.array(item, { minLength: n, maxLength: n })),
      wrongType,
    );
  const opt = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: undefined });
  const positional = (...items: fc.Arbitrary<unknown>[]) =>
    fc.tuple(...items).map((values) => {
      const out = [...values];
      while (out.length > 0 && out[out.length - 1] === undefined) out.pop();
      return out;
    });

  const paramsOf = (method: (typeof METHOD_SHAPES)[number]): fc.Arbitrary<unknown[]> => {
    switch (method) {
      case 'getBalance':
      case 'getAccountInfo':
      case 'getProgramAccounts':
      case 'getTokenAccountsByOwner':
      case 'getSignaturesForAddress':
        return positional(pubkey, opt(config), opt(config));
      case 'getMultipleAccounts':
      case 'getRecentPrioritizationFees':
        return positional(array(pubkey), opt(config));
      case 'isBlockhashValid':
        return positional(
          fc.oneof(
            fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => bs58.encode(b)),
            pubkey,
          ),
          opt(config),
        );
      case 'getMinimumBalanceForRentExemption':
      case 'getBlock':
      case 'getBlocks':
        return positional(number, opt(fc.oneof(config, number)));
      case 'getSlotLeaders':
        return positional(number, number);
      case 'getLeaderSchedule':
        return positional(fc.oneof(number, config, fc.constant(null)), opt(config));
      case 'getFeeForMessage':
      case 'simulateTransaction':
        return positional(transaction, opt(config));
      case 'getTransaction':
      case 'getSubmission':
        return positional(signature, opt(fc.oneof(config, encoding)));
      case 'requestAirdrop':
        return positional(pubkey, number, opt(config));
      case 'getLandingReport':
        return positional(
          opt(
            fc.oneof(
              fc.record({ since: fc.oneof(number, fc.constantFrom('15m', '24h', '7d', '8d', '0s', '1w', ''), wrongType) }),
              wrongType,
            ),
          ),
        );
      case 'getPriorityFeeEstimate':
        return positional(
          opt(
            fc.oneof(
              fc.record(
                {
                  accountKeys: fc.oneof(array(pubkey), wrongType),
                  transaction,
                  options: fc.oneof(
                    fc.record(
                      {
                        priorityLevel: fc.oneof(
                          fc.constantFrom('Min', 'High', 'UnsafeMax', '__proto__', 'constructor', 'toString'),
                          wrongType,
                        ),
                        lookbackSlots: number,
                        includeAllPriorityFeeLevels: fc.oneof(fc.boolean(), wrongType),
                        recommended: fc.oneof(fc.boolean(), wrongType),
                        transactionEncoding: encoding,
                      },
                      { requiredKeys: [] },
                    ),
                    wrongType,
                  ),
                },
                { requiredKeys: [] },
              ),
              wrongType,
            ),
          ),
        );
      case 'getLandingEstimate':
        return positional(
          fc.oneof(
            fc.record(
              {
                accountKeys: fc.oneof(array(pubkey), wrongType),
                computeUnits: number,
                transaction,
                probability: fc.oneof(fc.double({ min: -1, max: 2 }), fc.constantFrom(0.9, 0.01, 0.99, 1, 0), wrongType),
                withinSlots: number,
                bundle: fc.oneof(fc.boolean(), wrongType),
              },
              { requiredKeys: ['probability', 'withinSlots'] },
            ),
            wrongType,
          ),
        );
      case 'getSignatureStatuses':
      case 'getSubmissionStatuses':
      case 'getTransactionExposure':
        return positional(array(signature), opt(config));
      case 'getBundleStatuses':
      case 'getInflightBundleStatuses':
        return positional(
          array(
            fc.oneof(
              fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
              signature,
            ),
          ),
          opt(config),
        );
      default:
        return positional(opt(config), opt(anything));
    }
  };

  /** One read request: the method's own shapes mostly, else params of any type, or in the wrong places. */
  const readObject = fc.constantFrom(...METHOD_SHAPES).chain((method) =>
    fc.record({
      jsonrpc: fc.oneof({ weight: 20, arbitrary: fc.constant('2.0') }, anything),
      id: fc.oneof(fc.nat(), fc.string({ maxLength: 10 }), fc.constant(null)),
      method: fc.constant(method),
      params: fc.oneof(
        { weight: 6, arbitrary: paramsOf(method) },
        paramsOf(method).map((p) => [...p].reverse()),
        fc.array(anything, { maxLength: 4 }),
        anything,
      ),
    }),
  );
  const json = (value: unknown) => Buffer.from(JSON.stringify(value) ?? 'null');
  const rpcPath = fc.constantFrom('/', '/', '/', '/api/v1/transactions', '/api/v1/bundles', '/?anti_mev=1');

  const reads = fc
    .tuple(readObject, rpcPath)
    .map(([value, path]): ReadRequest => ({ kind: `read ${value.method}`, path, body: json(value) }));

  const send = fc
    .constantFrom(...context.validTransactions)
    .map((tx) => ({ jsonrpc: '2.0', id: 's', method: 'sendTransaction', params: [tx, { encoding: 'base64', skipPreflight: true }] }));
  const notification = readObject.map(({ id: _id, ...rest }) => rest);
  const entry = fc.oneof(
    { weight: 5, arbitrary: readObject },
    { weight: 3, arbitrary: hostileRpcObject(context.validTransactions) },
    send,
    notification,
    wrongType,
  );
  const batches = fc
    .tuple(
      fc.oneof(
        { weight: 8, arbitrary: fc.array(entry, { minLength: 1, maxLength: 30 }) },
        fc.array(entry, { minLength: 90, maxLength: 120 }),
        fc.constant([]),
      ),
      rpcPath,
    )
    .map(([entries, path]): ReadRequest => ({ kind: `batch of ${entries.length}`, path, body: json(entries) }));

  return { reads, batches };
}
