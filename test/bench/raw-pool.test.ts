/**
 * The open-loop client's own HTTP/1.1 connections (bench/raw-pool.ts): what it reads must be
 * what the server answered, request by request, or the latency figures time the wrong thing.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseResponseHead, RawHttpPool } from '../../bench/raw-pool';

describe('the benchmark client’s raw HTTP/1.1 pool', () => {
  let server: http.Server;
  let url: string;
  let connections = 0;

  before(async () => {
    server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        if (request.url === '/chunked') {
          response.writeHead(200, { 'content-type': 'text/plain' });
          response.write('part one ');
          setTimeout(() => response.end('part two'), 5);
          return;
        }
        if (request.url === '/cut') return void response.socket?.destroy();
        if (request.url === '/slow') {
          // The answer arrives in pieces, head and body split across packets.
          response.socket?.write('HTTP/1.1 200 OK\r\ncontent-');
          setTimeout(() => response.socket?.write('length: 11\r\n\r\nhello '), 5);
          setTimeout(() => response.socket?.write('world'), 10);
          return;
        }
        const answer = JSON.stringify({ path: request.url, body, key: request.headers['x-api-key'], host: request.headers.host });
        response.writeHead(request.url === '/missing' ? 404 : 200, {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(answer),
        });
        response.end(answer);
      });
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers each request with its own answer, more requests than connections waiting their turn', async () => {
    const pool = new RawHttpPool(url, 4);
    const before = connections;
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        pool.request(`/n/${i}`, { 'content-type': 'application/json', 'x-api-key': 'k1' }, `{"i":${i}}`),
      ),
    );
    answers.forEach((answer, i) => {
      assert.equal(answer.status, 200);
      const seen = JSON.parse(answer.body.toString()) as { path: string; body: string; key: string; host: string };
      assert.deepEqual(seen, { path: `/n/${i}`, body: `{"i":${i}}`, key: 'k1', host: new URL(url).host });
    });
    assert.equal(connections - before, 4, 'four connections, each kept open and reused');
    await pool.close();
  });

  it('reports the status of an error answer and reads an answer split across packets', async () => {
    const pool = new RawHttpPool(url, 1);
    assert.equal((await pool.request('/missing', {}, 'x')).status, 404);
    const slow = await pool.request('/slow', {}, 'x');
    assert.equal(slow.status, 200);
    assert.equal(slow.body.toString(), 'hello world');
    await pool.close();
  });

  it('fails a chunked answer, and a connection cut before its answer, with the reason; the next request goes through', async () => {
    const pool = new RawHttpPool(url, 1);
    await assert.rejects(pool.request('/chunked', {}, 'x'), /chunked answer/);
    await assert.rejects(pool.request('/cut', {}, 'x'), /closed the connection|ECONNRESET/);
    assert.equal((await pool.request('/after', {}, 'y')).status, 200);
    await pool.close();
    await assert.rejects(pool.request('/closed', {}, 'z'), /pool is closed/);
  });

  it('reads the status and Content-Length of the heads it accepts, and names what it refuses', () => {
    assert.deepEqual(parseResponseHead('HTTP/1.1 200 OK\r\nContent-Type: x\r\nContent-Length: 12\r\n'), { status: 200, length: 12 });
    assert.deepEqual(parseResponseHead('HTTP/1.1 429 Too Many Requests\r\ncontent-length:0\r\n'), { status: 429, length: 0 });
    assert.match(String(parseResponseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n')), /chunked/);
    assert.match(String(parseResponseHead('HTTP/1.1 200 OK\r\nConnection: close\r\n')), /without Content-Length/);
    assert.match(String(parseResponseHead('SSH-2.0-OpenSSH\r\n')), /not an HTTP\/1.1 status line/);
  });
});

/**
 * The same answer bytes read by the pool and by node:http's client, whose parser is llhttp:
 * a raw server writes one answer a connection and closes it. The pool checks less of a head
 * than llhttp (a header name with a control character, or two Content-Lengths, llhttp refuses
 * and the pool reads), which does not matter for the servers it measures; what must hold is
 * that it never reads an answer differently from llhttp.
 */
describe('the benchmark client’s raw HTTP/1.1 pool beside node:http', () => {
  let server: net.Server;
  let port: number;
  let answer = Buffer.alloc(0);

  before(async () => {
    server = net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => socket.end(answer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('never reads an answer differently from node:http: the same status and body wherever both read it, over 1,000 mutated answers', async () => {
    const pool = new RawHttpPool(`http://127.0.0.1:${port}`, 1);
    const random = prng(20261127);
    let bothRead = 0;
    for (let i = 0; i < 1_000; i++) {
      const head = i === 0 ? ANSWER_HEAD : mutate(ANSWER_HEAD, random);
      answer = Buffer.from(`${head}\r\n\r\n${ANSWER_BODY}`, 'latin1');
      const pooled = await pool.request('/', { 'content-type': 'application/json' }, '{}').then(
        (read) => ({ status: read.status, body: read.body.toString('latin1') }),
        (error: Error) => error,
      );
      const node = await readWithNodeHttp(port);
      if (pooled instanceof Error || node instanceof Error) continue;
      bothRead += 1;
      assert.deepEqual(pooled, node, `case ${i}: ${JSON.stringify(head)}`);
    }
    assert.ok(bothRead >= 200, `both read ${bothRead} of the 1,000 answers`);
    await pool.close();
  });
});

const ANSWER_BODY = '{"jsonrpc":"2.0","result":"5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoMuBu","id":1}';
const ANSWER_HEAD =
  'HTTP/1.1 200 OK\r\ncontent-type: application/json; charset=utf-8\r\n' +
  `content-length: ${ANSWER_BODY.length}\r\nDate: Fri, 27 Nov 2026 09:00:00 GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5`;
const INTERESTING = ['\r', '\n', ' ', '\t', ':', '\0', '\x7f', '\x80', '\xff', ',', '-', '+', '0', '9', 'A', 'a', '/', '\x0b'];
const EXTRA_LINES = [
  'Transfer-Encoding: chunked',
  'Content-Length: 3',
  `Content-Length: 0${ANSWER_BODY.length}`,
  `Content-Length: ${ANSWER_BODY.length + 1}`,
  `content-length:${ANSWER_BODY.length}`,
  'Connection: close',
  'X-A:  b ',
  ' folded',
];
const STATUSES = [100, 204, 301, 404, 429, 503, 999];

/** A small deterministic generator, so that a failure names a case that can be run again. */
function prng(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

/** One to three edits of a head: a character inserted, removed or replaced, a line added or repeated, case, status. */
function mutate(base: string, random: (n: number) => number): string {
  let head = base;
  for (let steps = 1 + random(3); steps > 0; steps--) {
    const at = random(head.length + 1);
    const lines = head.split('\r\n');
    const line = 1 + random(lines.length - 1);
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
      case 3:
        lines.splice(line, 0, EXTRA_LINES[random(EXTRA_LINES.length)]!);
        head = lines.join('\r\n');
        break;
      case 4:
        head = random(2) === 0 ? head.toUpperCase() : head.replace(/^HTTP\/1\.1 \d+/, `HTTP/1.1 ${STATUSES[random(STATUSES.length)]}`);
        break;
      default:
        lines.splice(line, 0, lines[line]!);
        head = lines.join('\r\n');
    }
  }
  return head;
}

/** What node:http's client (llhttp) read of the answer the raw server writes: its status and body, or why it refused. */
function readWithNodeHttp(port: number): Promise<{ status: number; body: string } | Error> {
  return new Promise((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks).toString('latin1') }));
      response.on('aborted', () => resolve(new Error('aborted')));
      response.on('error', resolve);
    });
    request.on('error', resolve);
    request.end('{}');
  });
}
