/**
 * A TPU receiver without QoS limits, for when Debian's quic-go is not installed: Slipway's
 * own QUIC server in a process of its own, taking every stream. It prints
 * {"event":"listening","port":N} per port.
 *
 * Usage: node tpu-receiver.js COUNT
 */
import { QuicServerEndpoint } from '../src/quic/server-endpoint';
import { generateIdentity, serverTls } from '../src/quic/tpu-handshakes';

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1);
  const identity = generateIdentity();
  let streams = 0;
  for (let i = 0; i < count; i++) {
    const endpoint = await QuicServerEndpoint.open({
      host: '127.0.0.1',
      port: 0,
      tls: serverTls(identity),
      maxStreamBytes: 1232,
      streamWindow: () => 4096,
      maxConnectionsPerIdentity: () => 1_000,
      retry: false,
      idleTimeoutMs: 60_000,
      onTransaction: () => streams++,
    });
    process.stdout.write(`${JSON.stringify({ event: 'listening', port: endpoint.port })}\n`);
  }
  process.on('SIGTERM', () => {
    process.stdout.write(`${JSON.stringify({ event: 'stats', streams })}\n`);
    process.exit(0);
  });
}

void main();
