/**
 * Slipway's HTTP interface described for machines and readers: an OpenAPI 3.1 document of
 * the paths (docs/openapi.json) and the table of JSON-RPC methods (docs/METHODS.md), both
 * written by `npm run docs` from this module. The error codes and limits come from the
 * code's own constants, and a test keeps the committed files equal to what this makes and
 * checks that every method listed is served.
 */
import { ERROR_CATALOGUE } from '../errors/error-catalogue';
import { MAX_JSON_DEPTH } from '../web/json-body';
import { BODY_LIMIT_BYTES } from './server';

export interface MethodDescription {
  readonly name: string;
  readonly params: string;
  readonly result: string;
  readonly notes: string;
  /** Where it is answered: by Slipway itself, or by an upstream it proxies to. */
  readonly servedBy: 'slipway' | 'reads upstream' | 'block engine (bundle route)';
}

export const JSON_RPC_METHODS: readonly MethodDescription[] = [
  {
    name: 'sendTransaction',
    params: '`[tx, {encoding?, skipPreflight?, preflightCommitment?, maxRetries?, minContextSlot?}]`',
    result: 'the signature (base58)',
    notes: 'validated, verified, preflighted unless skipped, journaled, forwarded; `?anti_mev=1` for protected routes',
    servedBy: 'slipway',
  },
  {
    name: 'sendBundle',
    params: '`[[tx, …1–5], {encoding?}]`',
    result: 'the bundle ID (or the signatures, with `bundleResult: signatures`)',
    notes: 'all or none; the key needs the bundle permission',
    servedBy: 'slipway',
  },
  {
    name: 'simulateBundle',
    params:
      '`[{encodedTransactions: [tx, …1–5]}, {preExecutionAccountsConfigs?, postExecutionAccountsConfigs?, transactionEncoding?, skipSigVerify?, replaceRecentBlockhash?, simulationBank?}]`',
    result: "Jito-Solana's shape: `{context, value: {summary, transactionResults}}`",
    notes:
      'each transaction on what the previous left, nothing committed; the key needs the bundle permission; on `/` and `/api/v1/bundles`',
    servedBy: 'slipway',
  },
  {
    name: 'getSubmissionStatuses',
    params: '`[[signature or bundle ID, …1–256]]`',
    result: '`{context, value}`: an entry (state, slot, reason, routes, anti-MEV evidence) or null for each',
    notes: "Slipway's own; a key sees only its own submissions",
    servedBy: 'slipway',
  },
  {
    name: 'getSubmission',
    params: '`[signature or bundle ID]`',
    result: 'one entry, or null',
    notes: "Slipway's own",
    servedBy: 'slipway',
  },
  {
    name: 'getLandingReport',
    params: '`[]` or `[{since?}]`: seconds, or a duration `"15m"`, `"24h"`, `"7d"` (default 24 h, at most 7 d)',
    result: '`{keyId, since, until, transactions, final, landedPercent, timeToLand: {ms, slots}, refused, bundles, byOperation, byRoute}`',
    notes: "Slipway's own; the calling key's submissions only; counted against its reads; docs/API.md defines each figure",
    servedBy: 'slipway',
  },
  {
    name: 'getPriorityFeeEstimate',
    params:
      "Helius's: `[{transaction? | accountKeys?, options?: {priorityLevel, includeAllPriorityFeeLevels, lookbackSlots (1–150), recommended, transactionEncoding, includeVote, evaluateEmptySlotAsZero}}]`",
    result:
      '`{priorityFeeEstimate}` or `{priorityFeeLevels: {min, low, medium, high, veryHigh, unsafeMax}}`, micro-lamports per compute unit',
    notes:
      "from the recent blocks read through the reads route (once a slot), as Helius computes it; counted against the key's reads; docs/API.md lists the differences",
    servedBy: 'slipway',
  },
  {
    name: 'getLandingEstimate',
    params: '`[{transaction (base64) | accountKeys + computeUnits, probability (0.01–0.99), withinSlots (1–150), bundle?}]`',
    result:
      '`{microLamportsPerComputeUnit, tipLamports? (bundles), probability, reachable, withinSlots, feeLamports, byRoute, evidence}`: the fee (or tip) for that chance of landing within that many slots',
    notes:
      "Slipway's own: learnt from the journal's outcomes of the last 10 minutes, ranked in the market of the moment each was sent; counted against the key's reads; docs/FEES.md",
    servedBy: 'slipway',
  },
  {
    name: 'getSignatureStatuses',
    params: '`[[signature, …1–256], {searchTransactionHistory?}]`',
    result: "Solana's shape",
    notes: 'the reads upstream, filled in from the journal',
    servedBy: 'slipway',
  },
  {
    name: 'getInflightBundleStatuses',
    params: '`[[bundle ID, …1–5]]`',
    result: "Jito's shape: Invalid, Pending, Failed (with `err`), Landed",
    notes: 'the journal, then the route',
    servedBy: 'slipway',
  },
  {
    name: 'getBundleStatuses',
    params: '`[[bundle ID, …1–5]]`',
    result: "Jito's shape, landed bundles only",
    notes: 'the journal, then the route',
    servedBy: 'slipway',
  },
  {
    name: 'getTipAccounts',
    params: '`[]`',
    result: "the block engine's tip accounts",
    notes: 'a tip is a plain transfer to one of them',
    servedBy: 'block engine (bundle route)',
  },
  {
    name: 'any other Solana method',
    params: "as Solana's",
    result: "as Solana's",
    notes:
      '`getLatestBlockhash`, `getBalance`, `simulateTransaction`, … proxied unchanged (on the embedded ledger: the methods docs/API.md lists, and `requestAirdrop`)',
    servedBy: 'reads upstream',
  },
];

/** The methods a test calls on a gateway to see that each is served (not -32601). */
export const SERVED_METHODS = JSON_RPC_METHODS.filter((m) => m.servedBy !== 'reads upstream').map((m) => m.name);

export function methodsMarkdown(): string {
  const rows = JSON_RPC_METHODS.map(
    (m) =>
      `| \`${m.name.startsWith('any') ? '…' : m.name}\`${m.name.startsWith('any') ? ' (any other)' : ''} | ${m.params} | ${m.result} | ${m.servedBy} | ${m.notes} |`,
  );
  const errors = Object.entries(ERROR_CATALOGUE).map(([kind, e]) => `| ${e.code} | \`${kind}\` | ${e.http} | ${e.batchHttp} |`);
  return [
    '# JSON-RPC methods and error codes',
    '',
    '<!-- Written by `npm run docs` from src/http/api-description.ts and the error catalogue; a test keeps it so. -->',
    '',
    'On `POST /`, `POST /api/v1/transactions` and `POST /api/v1/bundles`, with `x-api-key`. docs/API.md explains each.',
    '',
    '| Method | Params | Result | Served by | Notes |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    '## Error codes',
    '',
    '| Code | Kind | HTTP on `/` | HTTP on `/submit-batch` |',
    '|---|---|---|---|',
    ...errors,
    '',
  ].join('\n');
}

const jsonRpcRequest = {
  type: 'object',
  required: ['jsonrpc', 'method'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['number', 'string', 'null'] },
    method: { type: 'string', enum: JSON_RPC_METHODS.filter((m) => m.servedBy !== 'reads upstream').map((m) => m.name) },
    params: { type: 'array' },
  },
};
const errorCodes = [...new Set(Object.values(ERROR_CATALOGUE).map((e) => e.code))].sort((a, b) => b - a);
const codeMessage = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/CodeMessage' } } },
});
const apiKey = [{ apiKey: [] }, { jitoAuth: [] }, { apiKeyQuery: [] }];
const jsonRpcPath = (summary: string) => ({
  post: {
    summary,
    security: apiKey,
    parameters: [
      {
        name: 'anti_mev',
        in: 'query',
        schema: { enum: ['0', '1', 'true', 'false'] },
        description: 'protected routes only (docs/ANTI_MEV.md)',
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [
              { $ref: '#/components/schemas/JsonRpcRequest' },
              { type: 'array', maxItems: 100, items: { $ref: '#/components/schemas/JsonRpcRequest' } },
            ],
          },
        },
      },
    },
    responses: {
      '200': {
        description: 'a JSON-RPC response (JSON-RPC errors travel with 200, as on a Solana node)',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/JsonRpcResponse' } } },
      },
      '204': { description: 'only notifications were sent' },
      '401': { description: 'missing, unknown or revoked API key (-32098)' },
      '403': { description: 'the key lacks the permission (-32099)' },
      '429': { description: "over the key's rate limit (-32097) or too many connections from the address (-32096); Retry-After" },
      '503': { description: 'over capacity or shutting down (-32095), or a shared store unreachable (-32094); Retry-After' },
    },
  },
});

/** Jito's tip floor entry (tip-floor-route.ts; advice/tip-floor.ts). */
const tipFloorEntry = {
  type: 'object',
  required: [
    'time',
    'landed_tips_25th_percentile',
    'landed_tips_50th_percentile',
    'landed_tips_75th_percentile',
    'landed_tips_95th_percentile',
    'landed_tips_99th_percentile',
    'ema_landed_tips_50th_percentile',
  ],
  properties: {
    time: { type: 'string', description: "the minute (ISO 8601, UTC); the engine's own when passed through (tipFloorUrl)" },
    landed_tips_25th_percentile: { type: 'number', description: 'SOL' },
    landed_tips_50th_percentile: { type: 'number', description: 'SOL' },
    landed_tips_75th_percentile: { type: 'number', description: 'SOL' },
    landed_tips_95th_percentile: { type: 'number', description: 'SOL' },
    landed_tips_99th_percentile: { type: 'number', description: 'SOL' },
    ema_landed_tips_50th_percentile: { type: 'number', description: 'SOL' },
  },
};

/** Jito's tip floor and its stream (tip-floor-route.ts, tip-stream.ts). */
const TIP_FLOOR_PATHS = {
  '/api/v1/bundles/tip_floor': {
    get: {
      summary:
        "Jito's tip floor: landed bundles' tips at the 25th–99th percentiles and the EMA of the median, in SOL (docs/FEES.md); HEAD too",
      security: apiKey,
      responses: {
        '200': {
          description: 'the current entry, or an empty array when no bundle landed in the last five minutes (and no tipFloorUrl answered)',
          content: {
            'application/json': { schema: { type: 'array', maxItems: 1, items: { $ref: '#/components/schemas/TipFloorEntry' } } },
          },
        },
        '400': codeMessage('a query parameter other than the key (-32602, naming it)'),
        '401': codeMessage('missing, unknown or revoked API key'),
        '405': codeMessage('a method other than GET or HEAD; Allow: GET, HEAD'),
        '429': codeMessage("over the key's reads per second (-32097); Retry-After"),
      },
    },
  },
  '/api/v1/bundles/tip_stream': {
    get: {
      summary:
        "Jito's tip stream (WebSocket): the tip floor's one-entry array at once on opening, then whenever it changes, at most once a second",
      security: apiKey,
      responses: {
        '101': { description: 'the stream; it takes no messages (any closes it, 1008)' },
        '401': codeMessage('missing, unknown or revoked API key'),
        '426': codeMessage('a GET without a WebSocket handshake'),
        '429': codeMessage("over the key's reads per second, or 4 streams open for the key"),
      },
    },
  },
};

export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Slipway',
      version: '1',
      description: `Transaction-submission gateway for Solana. Request bodies up to ${BODY_LIMIT_BYTES} bytes, JSON nested at most ${MAX_JSON_DEPTH} levels. docs/API.md is the prose reference; docs/METHODS.md lists the JSON-RPC methods.`,
    },
    servers: [{ url: 'http://127.0.0.1:8080' }],
    paths: {
      '/': jsonRpcPath('JSON-RPC 2.0: sendTransaction, sendBundle, statuses, and reads'),
      '/api/v1/transactions': jsonRpcPath('Jito-style path: the same methods as /'),
      '/api/v1/bundles': jsonRpcPath('Jito-style path: the same methods as /'),
      '/submit-batch': {
        post: {
          summary: 'A non-atomic batch of 1–5 transactions',
          security: apiKey,
          parameters: [{ name: 'anti_mev', in: 'query', schema: { enum: ['0', '1', 'true', 'false'] } }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/SubmitBatchRequest' } } } },
          responses: {
            '200': {
              description: 'every transaction accepted',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/SubmitBatchSuccess' } } },
            },
            '400': codeMessage('the request or a transaction is invalid (the message says which)'),
            '401': codeMessage('missing, unknown or revoked API key'),
            '413': codeMessage(`body over ${BODY_LIMIT_BYTES} bytes`),
            '415': codeMessage('compressed body'),
            '429': codeMessage('rate limit or connections; Retry-After'),
            '502': codeMessage('no upstream could take the transactions'),
            '503': codeMessage('over capacity, shutting down, no route, or a store unreachable; Retry-After when it says when'),
          },
        },
      },
      ...TIP_FLOOR_PATHS,
      '/health': {
        get: {
          summary: 'Liveness (no key)',
          responses: {
            '200': {
              description: "alive, with the reads upstream's slot",
              content: {
                'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' }, slot: { type: 'integer' } } } },
              },
            },
            '503': { description: 'the reads upstream cannot be reached, or the gateway is shutting down' },
          },
        },
      },
      '/metrics': {
        get: {
          summary: 'Prometheus metrics (this machine, or metricsToken)',
          security: [{}, { operatorToken: [] }],
          responses: {
            '200': { description: 'text/plain; version=0.0.4' },
            '401': codeMessage('wrong or missing metricsToken'),
            '403': codeMessage('not from this machine'),
          },
        },
      },
      '/dashboard': {
        get: {
          summary: 'The live dashboard (this machine, or dashboardToken as ?token=)',
          security: [{}, { operatorToken: [] }],
          responses: {
            '200': { description: 'HTML' },
            '401': codeMessage('wrong or missing dashboardToken'),
            '403': codeMessage('not from this machine'),
          },
        },
      },
      '/dashboard/events': {
        get: {
          summary: "The dashboard's server-sent events (init, then an update a second)",
          security: [{}, { operatorToken: [] }],
          responses: { '200': { description: 'text/event-stream' } },
        },
      },
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        jitoAuth: { type: 'apiKey', in: 'header', name: 'x-jito-auth' },
        apiKeyQuery: { type: 'apiKey', in: 'query', name: 'api-key' },
        operatorToken: { type: 'http', scheme: 'bearer' },
      },
      schemas: {
        JsonRpcRequest: jsonRpcRequest,
        JsonRpcResponse: {
          type: 'object',
          properties: {
            jsonrpc: { const: '2.0' },
            id: { type: ['number', 'string', 'null'] },
            result: {},
            error: {
              type: 'object',
              properties: { code: { type: 'integer', enum: errorCodes }, message: { type: 'string' }, data: {} },
              required: ['code', 'message'],
            },
          },
        },
        SubmitBatchRequest: {
          type: 'object',
          required: ['params'],
          properties: {
            jsonrpc: { const: '2.0' },
            id: { type: ['number', 'string', 'null'] },
            params: {
              type: 'object',
              required: ['transactions', 'options'],
              properties: {
                transactions: {
                  type: 'array',
                  minItems: 1,
                  maxItems: 5,
                  items: { type: 'string', maxLength: 1644, description: 'Base64 of a signed transaction' },
                },
                options: { type: 'array', maxItems: 0 },
              },
            },
          },
        },
        SubmitBatchSuccess: {
          type: 'object',
          properties: { code: { const: 1 }, message: { const: 'success' }, signatures: { type: 'array', items: { type: 'string' } } },
        },
        TipFloorEntry: tipFloorEntry,
        CodeMessage: {
          type: 'object',
          required: ['code', 'message'],
          properties: { code: { type: 'integer', enum: [...errorCodes, 401, 403, 404] }, message: { type: 'string' } },
        },
      },
    },
  };
}
