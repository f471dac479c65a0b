/**
 * The listener on port + 1, where Solana clients look for PubSub by default. It serves
 * WebSocket upgrades only, and a door of its own must be as hardened as the main port's:
 * the same admission per connection, the main port's header and request time-outs, and an
 * answer (then a closed socket) for anything else that arrives on it.
 */
import http, { type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Admission } from './admission';
import { ONLY_WEBSOCKET_UPGRADES } from './foreign-upgrade';
import { rejectUpgrade } from './subscription-upgrade';

export interface UpgradeListenerOptions {
  readonly host: string;
  readonly port: number;
  readonly admission: Admission;
  /** The main port's time-outs. */
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  /** How often Node checks the time-outs of open connections. */
  readonly connectionsCheckingIntervalMs: number;
  /** Hands the listener's upgrades to the subscription server. */
  readonly attach: (server: Server) => void;
  readonly logError: (error: unknown, what: string) => void;
  readonly warn: (message: string) => void;
}

/**
 * Opens the listener: WebSocket upgrades only (other requests get 426). Resolves undefined
 * (with a warning) if the port is taken, since the main port serves subscriptions anyway.
 */
export async function listenForUpgrades(options: UpgradeListenerOptions): Promise<Server | undefined> {
  const { host, port } = options;
  const server = http.createServer(
    {
      headersTimeout: options.headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      connectionsCheckingInterval: options.connectionsCheckingIntervalMs,
      ...ONLY_WEBSOCKET_UPGRADES,
    },
    (_request, response) => {
      response
        .writeHead(426, { 'content-type': 'text/plain', connection: 'close' })
        .end('this port serves WebSocket subscriptions only (Solana PubSub); send HTTP requests to the main port\n');
    },
  );
  server.on('connection', (socket: Socket) => options.admission.connected(socket));
  server.on('clientError', (_error, socket: Duplex) => rejectUpgrade(socket, 400, 'the request is not valid HTTP/1.1'));
  server.on('connect', (_request: IncomingMessage, socket: Duplex) =>
    rejectUpgrade(socket, 405, 'CONNECT is not served: Slipway is not a proxy'),
  );
  options.attach(server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    server.on('error', (error) => options.logError(error, `the WebSocket listener on port ${port}`));
    return server;
  } catch (error) {
    options.warn(`WebSocket subscriptions are served on the main port only: port ${port} is not available (${(error as Error).message})`);
    return undefined;
  }
}
