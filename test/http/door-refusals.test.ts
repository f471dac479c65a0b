/**
 * Requests at the edge of what the doors take, each answered by one rule on every path, in
 * Slipway's shape, with words a user can act on: a Content-Type without a slash, a
 * Content-Encoding in capitals, x-api-key sent twice or empty, an Idempotency-Key on a read,
 * request lines of other HTTP versions, no Host, an unknown Expect, ids JSON cannot carry
 * back, an anti_mev value outside its choices. Where lean HTTP could take a request, the
 * same bytes go to a connection lean HTTP serves and to one node:http serves, and the answers
 * must be the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { comparable, RawConnection, request, type RawResponse } from '../helpers/raw-http';

let gw: TestGateway;
let port: number;
before(async () => {
  gw = await startTestGateway();
  port = Number(new URL(gw.url).port);
});
after(async () => gw?.close());

const getHealth = (id: unknown = 1) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"getHealth"}`;

/** The first answer to `bytes` on a new connection (lean HTTP's, when it takes them). */
async function answerTo(bytes: string, warmUp = false): Promise<RawResponse> {
  const connection = new RawConnection(port);
  try {
    if (warmUp) {
      // A first request outside lean HTTP's form: the connection is node:http's from then on.
      connection.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal((await connection.next())?.status, 200);
    }
    connection.write(bytes);
    const answer = await connection.next(5_000);
    assert.ok(answer !== null, `no answer to ${JSON.stringify(bytes.slice(0, 80))}`);
    return answer;
  } finally {
    connection.close();
  }
}

/** The answer to `bytes` on a lane connection and on a node:http one, which must agree; its status and parsed body. */
async function bothWays(bytes: string): Promise<{ status: number; body: any }> {
  const [lane, node] = [await answerTo(bytes), await answerTo(bytes, true)];
  const bare = (answer: RawResponse) => ({ ...comparable(answer), headers: [] });
  assert.deepEqual(bare(lane), bare(node), `lean HTTP and node:http differ on ${JSON.stringify(bytes.slice(0, 120))}`);
  return { status: lane.status, body: lane.body === '' ? undefined : JSON.parse(lane.body) };
}

describe('the doors: one rule on every path', () => {
  it('a Content-Type without a slash is read as JSON on every path, as the documents say of any Content-Type', async () => {
    for (const path of ['/', '/?x=1', '/api/v1/transactions']) {
      const answer = await bothWays(
        request(path, gw.key, getHealth(), ['Content-Type: foo']).replace('Content-Type: application/json\r\n', ''),
      );
      assert.equal(answer.status, 200, path);
      assert.equal(answer.body.result, 'ok', `${path}: ${JSON.stringify(answer.body)}`);
    }
    for (const path of ['/submit-batch', '/submit-batch?x=1']) {
      const bytes = request(path, gw.key, '{"params":{"transactions":[]}}').replace('Content-Type: application/json', 'Content-Type: foo');
      const answer = await bothWays(bytes);
      assert.equal(answer.status, 400, path);
      assert.match(answer.body.message, /^params\.options is required/, `${path}: ${JSON.stringify(answer.body)}`);
    }
  });

  it('a body too large is refused as too large (413 on /submit-batch) whatever its Content-Type says', async () => {
    const big = `{"params":"${'x'.repeat(70_000)}"}`;
    for (const type of ['foo', 'application/json']) {
      for (const path of ['/submit-batch', '/submit-batch?x=1']) {
        const answer = await answerTo(request(path, gw.key, big).replace('Content-Type: application/json', `Content-Type: ${type}`));
        assert.equal(answer.status, 413, `${type} ${path}`);
        assert.deepEqual(JSON.parse(answer.body), { code: -32600, message: 'the request body is larger than 65536 bytes' });
      }
    }
  });

  it('Content-Encoding: identity in any case, empty, or repeated is no compression (codings are case-insensitive); gzip is refused', async () => {
    for (const coding of ['IDENTITY', 'Identity', 'identity', '', 'identity\r\nContent-Encoding: identity']) {
      for (const path of ['/', '/?x=1']) {
        const answer = await bothWays(request(path, gw.key, getHealth(), [`Content-Encoding: ${coding}`]));
        assert.equal(answer.body.result, 'ok', `${coding} on ${path}: ${JSON.stringify(answer.body)}`);
      }
    }
    for (const coding of ['gzip', 'identity, gzip', 'identity\r\nContent-Encoding: br']) {
      const compressed = await bothWays(request('/submit-batch', gw.key, '{}', [`Content-Encoding: ${coding}`]));
      assert.equal(compressed.status, 415, coding);
    }
  });
});

describe('the doors: the API key', () => {
  it('x-api-key sent twice is refused saying to send it once, equal or not', async () => {
    for (const second of [gw.key, 'slw_other']) {
      for (const path of ['/', '/submit-batch']) {
        const answer = await bothWays(request(path, gw.key, getHealth(), [`x-api-key: ${second}`]));
        assert.equal(answer.status, 401, path);
        const message = path === '/' ? answer.body.error.message : answer.body.message;
        assert.equal(message, 'x-api-key was sent more than once: send the x-api-key header once');
      }
    }
  });

  it('?api-key= given twice is refused saying to give it once, equal or not, on requests and WebSocket handshakes', async () => {
    for (const second of [gw.key, 'slw_other']) {
      for (const path of ['/', '/submit-batch']) {
        const answer = await bothWays(request(`${path}?api-key=${gw.key}&api-key=${second}`, '', getHealth()));
        assert.equal(answer.status, 401, path);
        const message = path === '/' ? answer.body.error.message : answer.body.message;
        assert.equal(message, 'api-key was given more than once in the query: give ?api-key= once');
      }
      const upgrade = await answerTo(
        `GET /?api-key=${gw.key}&api-key=${second} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      assert.equal(upgrade.status, 401);
      assert.deepEqual(JSON.parse(upgrade.body), {
        code: 401,
        message: 'api-key was given more than once in the query: give ?api-key= once',
      });
    }
    // Once is served.
    assert.equal((await bothWays(request(`/?api-key=${gw.key}`, '', getHealth()))).body.result, 'ok');
  });

  it('an empty x-api-key beside ?api-key= is no key: the query key is read', async () => {
    const bytes = request('/?api-key=' + gw.key, '', getHealth());
    const answer = await bothWays(bytes);
    assert.equal(answer.body.result, 'ok', JSON.stringify(answer.body));
    const none = await bothWays(request('/', '', getHealth()));
    assert.equal(none.status, 401);
    assert.equal(none.body.error.message, 'missing API key: send it in the x-api-key header');
  });
});

describe('the doors: the request around the body', () => {
  it('a malformed Idempotency-Key is ignored by a read, as the documents say, and refused on a submission with its id', async () => {
    for (const value of ['a'.repeat(300), 'has space\x01'.replace('\x01', '')]) {
      const read = await bothWays(request('/', gw.key, getHealth(5), [`Idempotency-Key: ${value}`]));
      assert.equal(read.body.result, 'ok', JSON.stringify(read.body));
    }
    const send = '{"jsonrpc":"2.0","id":6,"method":"sendTransaction","params":["AA"]}';
    const refused = await bothWays(request('/', gw.key, send, [`Idempotency-Key: ${'a'.repeat(300)}`]));
    assert.equal(refused.body.error.code, -32600);
    assert.equal(refused.body.id, 6);
    assert.match(refused.body.error.message, /^Idempotency-Key must be one header of 1 to 255 visible ASCII characters/);
  });

  it('a read whose params do not fit is refused with -32602 naming the parameter, by lean HTTP and node:http alike', async () => {
    const body = '{"jsonrpc":"2.0","id":3,"method":"getBalance","params":["11111111111111111111111111111111",1]}';
    const answer = await bothWays(request('/', gw.key, body));
    assert.deepEqual(answer.body.error, {
      code: -32602,
      message: "Invalid params: getBalance's params[1] (config) must be a configuration object; got 1",
    });
    assert.equal(answer.body.id, 3);
  });

  it('anti_mev outside its choices is refused with the request id, naming every value it takes', async () => {
    const answer = await answerTo(request('/?anti_mev=2', gw.key, getHealth(9)));
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.body), {
      jsonrpc: '2.0',
      error: { code: -32602, message: 'the anti_mev query parameter must be 1 or true (protection on), or 0 or false (off); got "2"' },
      id: 9,
    });
  });

  it('an id JSON cannot carry back (1e999, an integer past 2^53) is refused with -32600 naming it, not answered under null', async () => {
    const infinite = await bothWays(request('/', gw.key, '{"jsonrpc":"2.0","id":1e999,"method":"getHealth"}'));
    assert.equal(infinite.body.error.code, -32600);
    assert.match(infinite.body.error.message, /^Invalid Request: the id is a number too large for JSON to carry back/);
    const huge = await bothWays(request('/', gw.key, '{"jsonrpc":"2.0","id":123456789012345678901,"method":"getHealth"}'));
    assert.equal(huge.body.error.code, -32600);
    assert.match(huge.body.error.message, /^Invalid Request: the id 123456789012345680000 is an integer past 2\^53/);
    const fine = await bothWays(request('/', gw.key, '{"jsonrpc":"2.0","id":0.5,"method":"getHealth"}'));
    assert.equal(fine.body.id, 0.5);
    // /submit-batch answers in its own shape, {code, message}, with HTTP 400.
    for (const [id, message] of [
      ['1e999', /^the id is a number too large for JSON to carry back/],
      ['123456789012345678901', /^the id 123456789012345680000 is an integer past 2\^53/],
    ] as const) {
      const batch = await bothWays(
        request('/submit-batch', gw.key, `{"jsonrpc":"2.0","id":${id},"params":{"transactions":["AAAA"],"options":[]}}`),
      );
      assert.equal(batch.status, 400, id);
      assert.equal(batch.body.code, -32600, id);
      assert.match(batch.body.message, message);
    }
  });
});

describe('the doors: HTTP itself', () => {
  const plain = (line: string, headers = 'Host: x\r\n') =>
    `${line}\r\n${headers}x-api-key: ${gw.key}\r\nContent-Length: ${getHealth().length}\r\n\r\n${getHealth()}`;

  it("HTTP/1.0 is served; HTTP/0.9, 1.2, 2.0 and 3.0 request lines are refused with 505 in Slipway's shape", async () => {
    const old = await bothWays(plain('POST / HTTP/1.0'));
    assert.equal(old.body.result, 'ok');
    for (const version of ['0.9', '2.0']) {
      const answer = await bothWays(plain(`POST / HTTP/${version}`));
      assert.equal(answer.status, 505, version);
      assert.deepEqual(answer.body, { code: -32600, message: `HTTP/${version} is not served: send HTTP/1.1 (HTTP/1.0 is served too)` });
    }
    for (const version of ['1.2', '3.0']) {
      const answer = await bothWays(plain(`POST / HTTP/${version}`));
      assert.equal(answer.status, 505, version);
      assert.deepEqual(answer.body, { code: -32600, message: 'that HTTP version is not served: send HTTP/1.1 (HTTP/1.0 is served too)' });
    }
  });

  it('an HTTP/1.1 request with two Host headers is refused 400, equal or not', async () => {
    for (const hosts of ['Host: x\r\nHost: x\r\n', 'Host: a\r\nHost: b\r\n']) {
      const answer = await bothWays(plain('POST / HTTP/1.1', hosts));
      assert.equal(answer.status, 400, hosts);
      assert.deepEqual(answer.body, { code: -32600, message: 'the Host header was sent 2 times: send it once' });
    }
  });

  it("an HTTP/1.1 request without Host, and an Expect other than 100-continue, are refused in Slipway's shape", async () => {
    const hostless = await bothWays(plain('POST / HTTP/1.1', ''));
    assert.equal(hostless.status, 400);
    assert.deepEqual(hostless.body, {
      code: -32600,
      message: 'the Host header is missing: an HTTP/1.1 request carries one (Host: the address you connect to)',
    });
    const expect = await bothWays(plain('POST / HTTP/1.1', 'Host: x\r\nExpect: foo\r\n'));
    assert.equal(expect.status, 417);
    assert.deepEqual(expect.body, {
      code: -32600,
      message: 'Expect: "foo" is not supported: send the request without Expect, or with Expect: 100-continue',
    });
  });

  it('a WebSocket handshake with a long Sec-WebSocket-Version is refused quoting it cut short, not whole', async () => {
    const version = '7'.repeat(5_000);
    const answer = await answerTo(
      `GET /?api-key=${gw.key} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: ${version}\r\n\r\n`,
    );
    assert.equal(answer.status, 400);
    assert.deepEqual(JSON.parse(answer.body), { code: 400, message: `Sec-WebSocket-Version must be 13 (got "${'7'.repeat(63)}…)` });
  });
  it('pipelined requests up to one with Connection: close are all answered on node:http, and the bytes after it ignored', async () => {
    // A query string keeps the requests out of lean HTTP's form: node:http serves them.
    const first = request('/?x=1', gw.key, getHealth(1));
    const last = request('/?x=1', gw.key, getHealth(2), ['Connection: close']);
    const connection = new RawConnection(port);
    try {
      connection.write(first + last + request('/?x=1', gw.key, getHealth(3)));
      const answers = [await connection.next(5_000), await connection.next(5_000)];
      assert.deepEqual(
        answers.map((answer) => [answer?.status, answer === null ? null : JSON.parse(answer.body).id]),
        [
          [200, 1],
          [200, 2],
        ],
      );
      assert.equal(await connection.next(2_000), null, 'nothing is answered after the request that asked to close');
      assert.ok(connection.ended, 'the connection is closed after the answer that said Connection: close');
    } finally {
      connection.close();
    }
  });
});
