/**
 * The open-loop client's own HTTP/1.1 connections (bench/raw-pool.ts): what it reads must be
 * what the server answered, request by request, or the latency figures time the wrong thing.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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

  it('reads a response head as llhttp does for the answers it accepts', () => {
    assert.deepEqual(parseResponseHead('HTTP/1.1 200 OK\r\nContent-Type: x\r\nContent-Length: 12\r\n'), { status: 200, length: 12 });
    assert.deepEqual(parseResponseHead('HTTP/1.1 429 Too Many Requests\r\ncontent-length:0\r\n'), { status: 429, length: 0 });
    assert.match(String(parseResponseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n')), /chunked/);
    assert.match(String(parseResponseHead('HTTP/1.1 200 OK\r\nConnection: close\r\n')), /without Content-Length/);
    assert.match(String(parseResponseHead('SSH-2.0-OpenSSH\r\n')), /not an HTTP\/1.1 status line/);
  });
});
