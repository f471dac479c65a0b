/**
 * The embedded ledger served over HTTP as a standalone local cluster (`bin/slipway ledger`):
 * a Solana JSON-RPC node on `/` and a Jito-style block engine on `/api/v1/bundles` and
 * `/api/v1/transactions`, with a node's semantics and error shapes (base58 by default,
 * preflight unless skipped, -32002 with logs, …), and fault injection for tests.
 * No API key: it plays the network, not the gateway.
 */
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Result } from '../errors/error-catalogue';
import { fail, ok, slipwayError } from '../errors/error-catalogue';
import { preflightFailure } from '../errors/preflight-failure';
import { checkJsonBody, installJsonBodyParser } from '../web/json-body';
import { createJsonRpcEndpoint, describeMethod, errorResponse, resultResponse, type JsonRpcId, type Reply } from '../web/json-rpc-envelope';
import { computeBundleId } from '../core/bundle-id';
import { validateTransaction, type ValidatedTransaction } from '../validation/validate-transaction';
import { verifyTransactionSignaturesAsValidators } from '../validation/verify-signatures';
import { FaultInjector, parseFaultSetting, type FaultSetting } from './fault-injector';
import { ledgerMethod } from './ledger-rpc';
import type { LocalLedger } from './local-ledger';
import { parseTpuFaultSetting, type TpuFaults, type TpuFaultSetting } from './tpu-faults';

const JITO_METHODS = new Set(['getTipAccounts', 'getBundleStatuses', 'getInflightBundleStatuses']);
const MAX_BUNDLE_TRANSACTIONS = 5;

export type Path = 'rpc' | 'bundles' | 'transactions';

interface CallContext {
  readonly path: Path;
  readonly bundleOnly: boolean;
}

export interface LedgerNodeOptions {
  readonly ledger: LocalLedger;
  readonly faults: FaultInjector;
  /** The TPUs' faults, when the node has TPUs (`/_faults` takes them in its `tpu` field). */
  readonly tpuFaults?: TpuFaults;
  readonly logLevel: string;
  /** Sees every JSON-RPC call (path and method) before it is served: for tests and tracing. */
  readonly observe?: (path: Path, method: string) => void;
}

const reply200 = (body: unknown): Reply => ({ status: 200, body });
const invalid = (message: string) => fail<never>(slipwayError('INVALID_PARAMS', message));

export function createLedgerNode({ ledger, faults, tpuFaults, logLevel, observe }: LedgerNodeOptions): FastifyInstance {
  const app = Fastify({
    logger: { level: logLevel, stream: process.stderr },
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: true,
  });
  installJsonBodyParser(app);
  app.addHook('onClose', async () => faults.releaseHanging());

  app.addHook('onRequest', async (request, reply) => {
    if (request.url.startsWith('/_faults')) return;
    switch (faults.drawTransportFault()) {
      case 'refuse':
        request.raw.socket.destroy();
        return reply.hijack();
      case 'error':
        return reply.code(503).type('text/plain').send('Service Unavailable (injected fault)');
      case 'hang':
        faults.hold(() => request.raw.socket.destroy());
        return reply.hijack();
      case 'garbage':
        return reply.code(200).type('application/json').send(Buffer.from('\x00\xffnot json at all <html>'));
      case 'half': {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: 'the rest of this answer never comes' });
        reply.hijack();
        request.raw.socket.end(
          `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, body.length >> 1)}`,
        );
        return;
      }
      case 'unhealthy':
        return reply
          .code(200)
          .send({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'Node is unhealthy', data: { numSlotsBehind: 150 } } });
      case 'slow': {
        reply.hijack();
        const socket = request.raw.socket;
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n');
        const drip = setInterval(() => (socket.writable ? socket.write(' ') : clearInterval(drip)), 100);
        socket.once('close', () => clearInterval(drip));
        faults.hold(() => socket.destroy());
        return;
      }
      default:
        return;
    }
  });

  const dispatch = async (id: JsonRpcId, method: string, params: readonly unknown[], context: CallContext): Promise<Reply> => {
    observe?.(context.path, method);
    const answer = call(method, params, context);
    if (answer === undefined)
      return reply200(errorResponse(id, slipwayError('METHOD_NOT_FOUND', `Method not found: ${describeMethod(method)}`)));
    if (!answer.ok) return reply200(errorResponse(id, answer.error));
    return reply200('error' in answer.value ? { jsonrpc: '2.0', error: answer.value.error, id } : resultResponse(id, answer.value.result));
  };

  /** Which methods each path answers, as a node and a block engine split them. */
  function call(method: string, params: readonly unknown[], context: CallContext) {
    if (context.path === 'rpc') {
      if (method === 'sendTransaction') return sendTransaction(params, false, true);
      if (JITO_METHODS.has(method)) return undefined;
    } else if (context.path === 'transactions') {
      if (method === 'sendTransaction') return sendTransaction(params, context.bundleOnly, false);
      return undefined;
    } else {
      if (method === 'sendBundle') return sendBundle(params);
      if (!JITO_METHODS.has(method)) return undefined;
    }
    const handler = ledgerMethod(method);
    return handler === undefined ? undefined : ok(handler(ledger, params));
  }

  function sendTransaction(params: readonly unknown[], bundleOnly: boolean, publicPath: boolean): Result<{ result: unknown }> {
    const parsed = parseTransactionParam(params, false);
    if (!parsed.ok) return parsed;
    const { tx, config } = parsed.value;
    const signaturesValid = verifyTransactionSignaturesAsValidators(tx.wire).valid;
    if (config.skipPreflight !== true) {
      if (!signaturesValid) return fail(slipwayError('SIGNATURE_VERIFICATION_FAILURE', 'Transaction signature verification failure'));
      if (typeof config.minContextSlot === 'number' && ledger.currentSlot < config.minContextSlot) {
        return fail(
          slipwayError('MIN_CONTEXT_SLOT_NOT_REACHED', 'Minimum context slot has not been reached', { contextSlot: ledger.currentSlot }),
        );
      }
      const simulation = ledger.simulate(tx);
      if (simulation.err !== null) return fail(preflightFailure(simulation));
    }
    // A transaction with a bad signature is answered and dropped, as a node's TPU drops it.
    if (signaturesValid && !faults.shouldDrop()) {
      if (bundleOnly) ledger.receiveBundle(computeBundleId([tx.signature]), [tx]);
      // The node's sendTransaction is public: forwarded to the upcoming leaders. The block
      // engine's is private: only the leader that includes it sees it.
      else ledger.receive(tx, { path: publicPath ? 'public' : 'private' });
    }
    return ok({ result: tx.signature });
  }

  function sendBundle(params: readonly unknown[]): Result<{ result: unknown }> {
    const [list, configValue] = params;
    const encoding = encodingOf(configValue);
    if (!encoding.ok) return encoding;
    if (!Array.isArray(list) || list.length === 0) return invalid('params[0] must be a non-empty array of transactions');
    if (list.length > MAX_BUNDLE_TRANSACTIONS) return invalid(`bundle has ${list.length} transactions; at most ${MAX_BUNDLE_TRANSACTIONS}`);
    const txs: ValidatedTransaction[] = [];
    for (const [index, encoded] of list.entries()) {
      if (typeof encoded !== 'string') return invalid(`transaction ${index} must be a string`);
      const tx = validateTransaction(encoded, `transaction ${index}`, undefined, { encoding: encoding.value });
      if (!tx.ok) return tx;
      if (txs.some((t) => t.signature === tx.value.signature)) return invalid(`bundle contains transaction ${tx.value.signature} twice`);
      txs.push(tx.value);
    }
    const bundleId = computeBundleId(txs.map((tx) => tx.signature));
    // As a block engine: the ID is answered at once; the outcome is read from the bundle statuses.
    if (!faults.shouldDrop()) ledger.receiveBundle(bundleId, txs);
    return ok({ result: bundleId });
  }

  const handle = createJsonRpcEndpoint(dispatch, (error, method) => app.log.error({ err: error, method }, 'request failed unexpectedly'));
  const route = (path: Path) => async (request: FastifyRequest, reply: FastifyReply) => {
    const unreadable = checkJsonBody(request.body);
    if (unreadable !== null) return reply.send(errorResponse(null, unreadable));
    const bundleOnly = (request.query as Record<string, unknown>).bundleOnly === 'true';
    const { status, body } = await handle(request.body, { path, bundleOnly });
    return status === 204 ? reply.code(204).send() : reply.code(status).send(body);
  };
  app.post('/', route('rpc'));
  app.post('/api/v1/bundles', route('bundles'));
  app.post('/api/v1/transactions', route('transactions'));
  app.get('/health', async (_request, reply) => reply.type('text/plain').send('ok'));
  registerFaultRoutes(app, ledger, faults, tpuFaults);
  return app;
}

/**
 * `/_faults`, where tests set the faults this node injects: `{mode, rate}` the HTTP fault,
 * `{tpu: {mode, rate, validator}}` (or a list of them) the TPUs'; either or both.
 */
function registerFaultRoutes(app: FastifyInstance, ledger: LocalLedger, faults: FaultInjector, tpuFaults: TpuFaults | undefined): void {
  const currentFaults = () => (tpuFaults === undefined ? faults.current : { ...faults.current, tpu: tpuFaults.current });
  app.get('/_faults', async () => currentFaults());
  app.post('/_faults', async (request, reply) => {
    const body = request.body as Record<string, unknown> | null;
    const hasTpu = body !== null && typeof body === 'object' && 'tpu' in body;
    let setting: FaultSetting | undefined;
    if (!hasTpu || 'mode' in body) {
      const parsed = parseFaultSetting(request.body);
      if (typeof parsed === 'string') return reply.code(400).send({ error: parsed });
      setting = parsed;
    }
    const tpuSettings: TpuFaultSetting[] = [];
    if (hasTpu) {
      if (tpuFaults === undefined) return reply.code(400).send({ error: 'this node has no TPUs' });
      for (const value of Array.isArray(body.tpu) ? body.tpu : [body.tpu]) {
        const parsed = parseTpuFaultSetting(value, ledger.schedule.identities);
        if (typeof parsed === 'string') return reply.code(400).send({ error: parsed });
        tpuSettings.push(parsed);
      }
    }
    if (setting !== undefined) faults.set(setting);
    for (const tpuSetting of tpuSettings) tpuFaults!.set(tpuSetting);
    return currentFaults();
  });
}

/** A node's `[transaction, config]`: base58 unless `config.encoding` says base64. */
function parseTransactionParam(
  params: readonly unknown[],
  verifySignatures: boolean,
): Result<{ tx: ValidatedTransaction; config: Record<string, unknown> }> {
  const [encoded, configValue] = params;
  if (typeof encoded !== 'string') return invalid('Invalid params: expected a transaction string as params[0]');
  const encoding = encodingOf(configValue);
  if (!encoding.ok) return encoding;
  const tx = validateTransaction(encoded, '', undefined, { encoding: encoding.value, verifySignatures });
  if (!tx.ok) return tx;
  return ok({ tx: tx.value, config: (configValue ?? {}) as Record<string, unknown> });
}

function encodingOf(config: unknown): Result<'base58' | 'base64'> {
  const encoding = config !== null && typeof config === 'object' ? (config as Record<string, unknown>).encoding : undefined;
  if (encoding === undefined || encoding === 'base58') return ok('base58');
  if (encoding === 'base64') return ok('base64');
  return invalid(`unsupported encoding: ${String(encoding)}. Supported encodings: base58, base64`);
}
