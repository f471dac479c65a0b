import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { readLeanRequest } from '../../src/http/lean-request';

/** What node:http (llhttp) made of one request. */
interface Parsed {
  readonly method: string;
  readonly url: string;
  readonly apiKey: string | string[] | undefined;
  readonly body: string;
}

/** A bare node:http server that records, per connection, the requests it parsed. */
let server: http.Server;
let port: number;
const seen = new Map<number, Parsed[]>();
before(async () => {
  server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // The client's port, kept from when it connected: a connection llhttp gives up on is closed before its requests end.
      const id = (request.socket as net.Socket & { clientPort?: number }).clientPort!;
      const list = seen.get(id) ?? [];
      list.push({
        method: request.method!,
        url: request.url!,
        apiKey: request.headers['x-api-key'],
        body: Buffer.concat(chunks).toString('latin1'),
      });
      seen.set(id, list);
      response.end('ok');
    });
  });
  server.on('connection', (socket: net.Socket & { clientPort?: number }) => (socket.clientPort = socket.remotePort));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

/** Sends `bytes` on a new connection; what node:http parsed once it has answered `expected` requests, or closed. */
function nodeParse(bytes: Buffer, expected: number): Promise<Parsed[]> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answers = 0;
    let local = 0;
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(seen.get(local) ?? []);
    };
    // Only a request llhttp waits on for ever (a body it reads as longer) gets this far.
    const timer = setTimeout(done, 2_000);
    socket.on('connect', () => {
      local = socket.localPort!;
      seen.delete(local); // a port used again: its earlier connection's requests are not this one's
      socket.write(bytes);
    });
    socket.on('data', (chunk: Buffer) => {
      answers += chunk.toString('latin1').split('HTTP/1.1 ').length - 1;
      if (answers >= expected) done();
    });
    socket.on('end', done);
    socket.on('error', () => {});
  });
}

/** A small deterministic generator, so that a failure names a case that can be run again. */
function prng(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

const BODY = '{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AQID",{"encoding":"base64"}]}';
const plain = (body: string, path = '/', key = 'slw_key') =>
  `POST ${path} HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nx-api-key: ${key}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
const INTERESTING = ['\r', '\n', ' ', '\t', ':', '\0', '\x7f', '\x80', '\xff', ',', '-', '+', '0', '9', 'A', 'a', '/', '?', '\x0b'];
const EXTRA_LINES = [
  'Transfer-Encoding: chunked',
  'Content-Length: 3',
  'Content-Length: 0' + String(BODY.length),
  'Connection: close',
  'Connection: keep-alive, Upgrade',
  'x-api-key: other',
  'Host: second',
  'X-A:  b ',
  'Expect: 100-continue',
  'content-length:' + String(BODY.length),
  ' folded',
];

function mutate(base: string, random: (n: number) => number): string {
  const headEnd = base.indexOf('\r\n\r\n');
  let head = base.slice(0, headEnd);
  const body = base.slice(headEnd + 4);
  for (let steps = 1 + random(3); steps > 0; steps--) {
    const at = random(head.length + 1);
    switch (random(6)) {
      case 0:
        head = head.slice(0, at) + INTERESTING[random(INTERESTING.length)]! + head.slice(at);
        break;
      case 1:
        head = head.slice(0, at) + head.slice(at + 1);
        break;
      case 2:
        head = head.slice(0, at) + INTERESTING[random(INTERESTING.length)]! + head.slice(at + 1);
        break;
      case 3: {
        const lines = head.split('\r\n');
        const line = 1 + random(lines.length - 1);
        lines.splice(line, 0, EXTRA_LINES[random(EXTRA_LINES.length)]!);
        head = lines.join('\r\n');
        break;
      }
      case 4:
        head = random(2) === 0 ? head.toUpperCase() : head.replace(/Content-Length: \d+/, `Content-Length: ${BODY.length + random(5) - 2}`);
        break;
      default: {
        const lines = head.split('\r\n');
        const line = 1 + random(lines.length - 1);
        lines.splice(line, 0, lines[line]!);
        head = lines.join('\r\n');
      }
    }
  }
  return `${head}\r\n\r\n${body}`;
}

describe("lean HTTP's reader, cross-checked against node:http's parser (llhttp)", () => {
  it('reads its plain form as llhttp does: the same path, key and body, and the next request starts where llhttp says', async () => {
    const read = readLeanRequest(Buffer.from(plain(BODY) + plain('{}'), 'latin1'), 8192, 65536);
    assert.ok(typeof read === 'object');
    assert.deepEqual([read.path, read.apiKey, read.body.toString(), read.keepAlive], ['/', 'slw_key', BODY, true]);
    assert.equal(readLeanRequest(Buffer.from(plain(BODY).slice(0, -1), 'latin1'), 8192, 65536), 'incomplete');
    assert.equal(readLeanRequest(Buffer.from(plain(BODY, '/?anti_mev=1'), 'latin1'), 8192, 65536), 'other');
  });

  it('never takes a request that llhttp reads differently, over 2,000 mutated requests', async () => {
    const random = prng(20261125);
    let taken = 0;
    let agreed = 0;
    for (let i = 0; i < 2_000; i++) {
      const first = mutate(plain(BODY, random(2) === 0 ? '/' : '/submit-batch'), random);
      const bytes = Buffer.from(first + plain('{"next":true}'), 'latin1');
      const read = readLeanRequest(bytes, 8192, 65536);
      if (typeof read !== 'object') continue;
      taken += 1;
      const parsed = await nodeParse(bytes, 2);
      const what = `case ${i}: ${JSON.stringify(first)} (${Buffer.from(first, 'latin1').toString('hex')})`;
      assert.ok(parsed.length >= 1, `${what}: llhttp refused what lean HTTP took`);
      assert.deepEqual(
        { method: parsed[0]!.method, url: parsed[0]!.url, apiKey: parsed[0]!.apiKey, body: parsed[0]!.body },
        { method: 'POST', url: read.path, apiKey: read.apiKey, body: read.body.toString('latin1') },
        what,
      );
      // Where lean HTTP says the first request ends, llhttp finds the second (when the rest is one lean HTTP would take).
      const rest = readLeanRequest(bytes.subarray(read.length), 8192, 65536);
      // (After `Connection: close`, llhttp reads nothing more: nor would lean HTTP, which closes.)
      if (typeof rest === 'object' && read.keepAlive) {
        assert.equal(parsed[1]?.body, rest.body.toString('latin1'), `${what}: the requests' boundary differs`);
        agreed += 1;
      }
    }
    // Enough of the mutations stay inside the form for the comparison to mean something.
    assert.ok(taken >= 200 && agreed >= 100, `only ${taken} of 2,000 mutated requests were taken, ${agreed} with a readable second`);
  });
});
