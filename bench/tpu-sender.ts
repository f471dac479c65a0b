/**
 * The TPU client under measurement, as a process of its own: one QUIC connection per
 * receiver port (leaders), pre-signed full-size transactions kept `outstanding` per
 * connection, counted once the receiver acknowledged all their bytes and FIN. It says when
 * its measured stretch starts and ends; the parent reads its CPU time from /proc.
 *
 * Usage: node tpu-sender.js '{"ports":[…],"warmupS":5,"seconds":30,"outstanding":512}'
 */
import { newSigner, paddedTransferFactory } from './signed-transactions';
import { clientTls, generateIdentity } from '../src/quic/tpu-handshakes';
import { QuicClientEndpoint, type EndpointConnection } from '../src/quic/udp-endpoint';

interface SenderConfig {
  readonly ports: number[];
  readonly warmupS: number;
  readonly seconds: number;
  readonly outstanding: number;
}

const TRANSACTION_BYTES = 1232;
const POOL = 20_000;
const say = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]!) as SenderConfig;
  const next = paddedTransferFactory(newSigner(), newSigner().publicKey, Buffer.alloc(32, 9), TRANSACTION_BYTES);
  const pool = Array.from({ length: POOL }, next);
  let at = 0;
  const endpoint = await QuicClientEndpoint.open({ bindAddress: '127.0.0.1' });
  const identity = generateIdentity();
  let delivered = 0;
  const perConnection = config.ports.map(() => ({ delivered: 0, inFlight: 0 }));
  const connections: EndpointConnection<number>[] = [];
  let established = 0;
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  const topUp = (index: number) => {
    const counts = perConnection[index]!;
    while (counts.inFlight < config.outstanding) {
      if (!endpoint.send(connections[index]!, pool[at++ % POOL]!, index)) break;
      counts.inFlight++;
    }
  };
  config.ports.forEach((port, index) => {
    connections.push(
      endpoint.connect<number>(
        '127.0.0.1',
        port,
        { tls: clientTls(identity), idleTimeoutMs: 30_000, maxWaiting: config.outstanding * 2 },
        (events) => {
          for (const event of events) {
            if (event.type === 'delivered') {
              delivered++;
              perConnection[index]!.delivered++;
              perConnection[index]!.inFlight--;
            } else if (event.type === 'established') {
              if (++established === config.ports.length) resolveReady();
            } else if (event.type === 'closed') {
              say({ event: 'error', message: `connection to port ${port} closed: ${event.reason} (code ${event.code})` });
              process.exit(1);
            }
          }
          topUp(index);
        },
      ),
    );
  });
  await ready;
  config.ports.forEach((_, index) => topUp(index));
  await new Promise((resolve) => setTimeout(resolve, config.warmupS * 1000));
  const startDelivered = delivered;
  say({ event: 'start', delivered });
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, config.seconds * 1000));
  const seconds = (performance.now() - started) / 1000;
  say({
    event: 'end',
    delivered,
    measured: delivered - startDelivered,
    seconds,
    perConnection: perConnection.map((counts) => counts.delivered),
    datagramsSent: endpoint.datagramsSent,
    datagramsReceived: endpoint.datagramsReceived,
    packetsLost: connections.reduce((sum, entry) => sum + entry.connection.packetsLost, 0),
  });
  await endpoint.close();
  process.exit(0);
}

main().catch((error: unknown) => {
  say({ event: 'error', message: error instanceof Error ? error.message : String(error) });
  process.exit(1);
});
