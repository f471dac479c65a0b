/**
 * The benchmark's ceiling: a bare node:http server in its own process that reads each
 * request body whole and answers a constant JSON-RPC body — what any HTTP gateway on this
 * machine costs at the least. Prints `listening on http://127.0.0.1:PORT`.
 */
import http from 'node:http';

const ANSWER = JSON.stringify({
  jsonrpc: '2.0',
  result: '5VERYLongConstantSignatureLikeResultThatLooksLikeABase58Signature11111111111',
  id: 1,
});

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    Buffer.concat(chunks);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
    response.end(ANSWER);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
