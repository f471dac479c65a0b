/**
 * The floor the TPU's cost is judged against, as a process of its own: it only calls
 * `dgram.send` with 1,252-byte datagrams to the receiver's address, for the seconds given,
 * and says when its measured stretch starts and ends (the parent reads its CPU from /proc).
 *
 * Usage: node udp-floor.js PORT WARMUP_S SECONDS
 */
import dgram from 'node:dgram';

const [port, warmupS, seconds] = process.argv.slice(2).map(Number) as [number, number, number];
const socket = dgram.createSocket({ type: 'udp4', sendBufferSize: 8 * 1024 * 1024 });
const datagram = Buffer.alloc(1252, 0x5a);
let sent = 0;
let measuring = false;
const started = Date.now();
const say = (event: object) => process.stdout.write(`${JSON.stringify(event)}\n`);

function burst(): void {
  // As many as the socket takes in one turn, then yield so that the sends complete.
  for (let i = 0; i < 64; i++) socket.send(datagram, port, '127.0.0.1');
  sent += 64;
  const elapsed = (Date.now() - started) / 1000;
  if (!measuring && elapsed >= warmupS) {
    measuring = true;
    say({ event: 'start', sent });
  }
  if (elapsed >= warmupS + seconds) {
    say({ event: 'end', sent });
    socket.close();
    return;
  }
  setImmediate(burst);
}
burst();
