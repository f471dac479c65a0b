/**
 * Answers written below HTTP (CONNECT on either port, a request Node cannot parse) are
 * followed by a half-close, not a reset: a client still sending its request reads the answer,
 * goes on writing without an error, and sees the server's end of the connection. Closing at
 * once lost the answer to the reset now and then (the fuzz slice's CONNECT, under load).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway';

describe('lingering close after a raw answer', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(() => gw.close());

  /** Sends `head`; once the answer has come, writes 256 KiB more and closes; resolves with the answer and any socket error. */
  const keepWriting = (port: number, head: string) =>
    new Promise<{ answer: string; error: string | undefined; ended: boolean }>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      let answer = '';
      let error: string | undefined;
      let ended = false;
      let wrote = false;
      socket.on('data', (chunk) => {
        answer += chunk.toString('latin1');
        if (wrote || !answer.includes('\r\n\r\n')) return;
        wrote = true;
        for (let i = 0; i < 16; i++) socket.write(Buffer.alloc(16 * 1024, 'x'));
        socket.end();
      });
      socket.on('end', () => (ended = true));
      socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
      socket.on('close', () => resolve({ answer, error, ended }));
      socket.write(head);
    });

  const mainPort = () => Number(new URL(gw.url).port);

  it('CONNECT on the main port: 405, then the client may finish writing without a reset', async () => {
    const result = await keepWriting(mainPort(), 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(result.answer, /^HTTP\/1\.1 405 /);
    assert.ok(result.answer.endsWith('"message":"CONNECT is not served: Slipway is not a proxy"}'), result.answer);
    assert.equal(result.error, undefined);
    assert.equal(result.ended, true);
  });

  it('CONNECT on port + 1: 405, then the client may finish writing without a reset', async () => {
    const result = await keepWriting(mainPort() + 1, 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(result.answer, /^HTTP\/1\.1 405 /);
    assert.equal(result.error, undefined);
    assert.equal(result.ended, true);
  });

  it('a request Node cannot parse: 400, then the client may finish writing without a reset', async () => {
    const result = await keepWriting(mainPort(), 'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n');
    assert.match(result.answer, /^HTTP\/1\.1 400 /);
    assert.ok(result.answer.endsWith('{"code":-32600,"message":"the request is not valid HTTP/1.1"}'), result.answer);
    assert.equal(result.error, undefined);
    assert.equal(result.ended, true);
  });
});
