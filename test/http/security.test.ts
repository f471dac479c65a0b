/**
 * The surfaces docs/SECURITY.md makes promises about, checked through them: the operator's
 * upstream credentials never reach a client, there is no administration over HTTP, and the
 * logs at the default level carry no key and no transaction.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import WebSocket from 'ws';
import { resolveConfig } from '../../src/config/config';
import { openStore } from '../../src/stores/database/open-store';
import { KEY_STORE } from '../../src/stores/store-adapters';
import { makeDataDir, startTestGateway } from '../helpers/gateway';
import { startServer } from '../helpers/process';
import { post, rpc } from '../helpers/rpc';
import { connect, fundedKeypair, transferTx } from '../helpers/solana';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('what clients can read', () => {
  it('an upstream URL is named by its host alone: credentials in its user part, path or query never reach a client', async () => {
    const secretUrl = 'http://operator:hunter2@127.0.0.1:1/v2/PATH-SECRET?api-key=QUERY-SECRET';
    const gw = await startTestGateway({}, { upstreams: { rpc: { type: 'rpc', urls: [secretUrl] } }, requestTimeoutMs: 300 });
    try {
      const read = await rpc(gw.url, gw.key, 'getLatestBlockhash', []);
      const health = await fetch(`${gw.url}/health`);
      const healthBody = await health.text();
      const texts = [JSON.stringify(read.body), healthBody];
      assert.equal(read.body.error.code, -32091);
      assert.match(
        read.body.error.message,
        /^getLatestBlockhash could not be answered: every endpoint failed: http:\/\/127\.0\.0\.1:1\/…: connection refused$/,
      );
      assert.equal(health.status, 503);
      for (const text of texts) {
        for (const secret of ['hunter2', 'operator', 'PATH-SECRET', 'QUERY-SECRET', 'api-key'])
          assert.equal(text.includes(secret), false, `${secret} leaked: ${text}`);
      }
    } finally {
      await gw.close();
    }
  });

  it('serves exactly the paths and methods docs/SECURITY.md lists: every route Fastify registered, and nothing of its own outside Fastify', async () => {
    const gw = await startTestGateway();
    try {
      const served = [...fastifyRoutes(gw.app.server.printRoutes({ commonPrefix: false })), WEBSOCKET_UPGRADE].sort();
      assert.deepEqual(served, documentedPaths(), 'the paths served, against docs/SECURITY.md\'s "Paths and methods"');
      // Lean HTTPs in front of Fastify (lean HTTP, then the fast path) take the submission form on
      // their own; on a path Fastify does not route, that form reaches Fastify's 404.
      for (const path of ['/keys', '/admin', '/api/v1/keys', `/${crypto.randomUUID()}`]) {
        const response = await rawRequest(gw.url, `POST ${path} HTTP/1.1`, gw.key, SUBMISSION);
        assert.match(response, /^HTTP\/1\.1 404 /, `POST ${path}: ${response}`);
      }
    } finally {
      await gw.close();
    }
  });

  it('no path it serves changes the keys: each, called with a key and a body asking for one, leaves the key store as it was', async () => {
    const gw = await startTestGateway();
    const keys = await openStore(resolveConfig({ dataDir: gw.dataDir }, {}), KEY_STORE);
    try {
      const before = (await keys.list()).map(({ id, name, revokedAt }) => ({ id, name, revokedAt }));
      const ask = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'createKey', params: [{ name: 'x', bundle: true }], name: 'x' });
      for (const entry of documentedPaths().filter((entry) => entry !== WEBSOCKET_UPGRADE)) {
        const [method, path] = entry.split(' ') as [string, string];
        const response = await fetch(`${gw.url}${path}`, {
          method,
          headers: { 'x-api-key': gw.key, 'content-type': 'application/json' },
          body: method === 'POST' ? ask : undefined,
          signal: AbortSignal.timeout(2_000),
        });
        await response.body?.cancel(); // the dashboard's event stream does not end by itself
      }
      const socket = new WebSocket(`${gw.url.replace('http', 'ws')}/keys`, { headers: { 'x-api-key': gw.key } });
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.send(ask);
      const answer = JSON.parse(String(await new Promise((resolve) => socket.once('message', resolve)))) as { error?: { code: number } };
      socket.close();
      assert.equal(answer.error?.code, -32601, 'a WebSocket knows subscriptions only');
      assert.deepEqual(
        (await keys.list()).map(({ id, name, revokedAt }) => ({ id, name, revokedAt })),
        before,
      );
    } finally {
      await keys.close();
      await gw.close();
    }
  });

  it("binds to the loopback address unless told otherwise, and a data directory it creates is its owner's alone", async () => {
    const gw = await startTestGateway();
    try {
      assert.match(gw.url, /^http:\/\/127\.0\.0\.1:/, 'bound to the loopback address unless configured otherwise');
      const fresh = path.join(gw.dataDir, 'fresh');
      const other = await startTestGateway({ dataDir: fresh });
      const mode = fs.statSync(fresh).mode & 0o777;
      await other.close();
      assert.equal(mode, 0o700, "a data directory it creates is its owner's alone");
    } finally {
      await gw.close();
    }
  });

  it('a data directory that exists, and the files in it, are made owner-only at start; what it creates there is 0600', async () => {
    const dir = makeDataDir();
    dirs.push(dir);
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, 'left-by-hand.txt'), 'x', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'left-by-hand.txt'), 0o644);
    const gw = await startTestGateway({ dataDir: dir });
    try {
      const connection = connect(gw.url, gw.key);
      const alice = await fundedKeypair(connection);
      await rpc(gw.url, gw.key, 'sendTransaction', [
        await transferTx(connection, alice, Keypair.generate().publicKey, 1_000),
        { encoding: 'base64' },
      ]);
      assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
      const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
      assert.ok(files.some((f) => f.name.endsWith('-wal')) && files.some((f) => /keys/.test(f.name)), files.map((f) => f.name).join(' '));
      for (const file of files) assert.equal(fs.statSync(path.join(file.parentPath, file.name)).mode & 0o777, 0o600, file.name);
    } finally {
      await gw.close();
    }
  });

  it(
    'a data directory that belongs to another user is refused, saying whose it is and what to run',
    { skip: process.geteuid?.() !== 0 && 'needs root to give a directory away' },
    async () => {
      const dir = makeDataDir();
      dirs.push(dir);
      fs.chownSync(dir, 4_242, 4_242);
      await assert.rejects(
        startTestGateway({ dataDir: dir }),
        new RegExp(
          `^Error: ${dir} belongs to user 4242, not to the user Slipway runs as \\(0\\): run Slipway as that user, or give it the directory: chown -R 0 ${dir}$`,
        ),
      );
    },
  );

  it('a link in the data directory is not followed: what it points to outside keeps its mode', async () => {
    const dir = makeDataDir();
    const outside = makeDataDir();
    dirs.push(dir, outside);
    const shared = path.join(outside, 'shared.txt');
    fs.writeFileSync(shared, 'x');
    fs.chmodSync(shared, 0o644);
    fs.symlinkSync(shared, path.join(dir, 'link.txt'));
    const gw = await startTestGateway({ dataDir: dir });
    await gw.close();
    assert.equal(fs.statSync(shared).mode & 0o777, 0o644);
  });
});

describe('logs at the default level', () => {
  it('carry no API key, no presented wrong key, and no transaction', async () => {
    const dir = makeDataDir();
    dirs.push(dir);
    const server = await startServer(dir); // SLIPWAY_LOG_LEVEL unset: info
    try {
      const key = server.initialKey!;
      const c = connect(server.url, key);
      const alice = await fundedKeypair(c);
      const good = await transferTx(c, alice, Keypair.generate().publicKey, 1_000_000);
      const damaged = Buffer.from(good, 'base64');
      damaged[10] = damaged[10]! ^ 0xff; // inside the signature
      const bad = damaged.toString('base64');
      const wrongKey = 'slw_WrongKeyThatMustNotBeLogged';
      assert.equal(typeof (await rpc(server.url, key, 'sendTransaction', [good, { encoding: 'base64' }])).body.result, 'string');
      assert.equal((await rpc(server.url, key, 'sendTransaction', [bad, { encoding: 'base64' }])).body.error.code, -32003);
      assert.equal((await rpc(server.url, wrongKey, 'getSlot')).status, 401);
      await post(`${server.url}/submit-batch?api-key=${key}`, { params: { transactions: [bad] } });
      await post(server.url, '{"jsonrpc": "2.0", "id": 1, "method": "sendTransaction", "params": [', { 'x-api-key': key });
      server.child.kill('SIGTERM');
      assert.equal(await server.exited, 0);
      const logs = server.stderr.join('') + server.stdout.filter((line) => !line.includes(key)).join('\n');
      for (const secret of [key, key.slice(4, 20), wrongKey, good.slice(0, 40), bad.slice(0, 40)])
        assert.equal(logs.includes(secret), false, `${secret} found in the logs`);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});

/** The WebSocket upgrade, taken on any path of either port: the one door served outside Fastify's routes. */
const WEBSOCKET_UPGRADE = 'GET * (Upgrade: websocket)';
const SUBMISSION = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: ['AQID', { encoding: 'base64' }] });

/**
 * "METHOD /path" for every route in Fastify's route tree (`printRoutes({ commonPrefix: false })`:
 * one node a line, indented four columns a level, its path relative to its parent's, its methods
 * in brackets). HEAD is left out where GET is there: Fastify adds it to every GET route.
 */
function fastifyRoutes(tree: string): string[] {
  const parents: string[] = [];
  const routes: string[] = [];
  for (const line of tree.split('\n')) {
    const node = /^([\s│├└─]*?)(?:[├└]── )(\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (node === null) continue;
    const depth = node[1]!.length / 4;
    const segment = node[2]!;
    const path = (parents[depth - 1] ?? '') + (segment.startsWith('/') ? segment : `/${segment}`);
    parents[depth] = path.replace(/\/$/, '');
    const methods = node[3]?.split(', ') ?? [];
    for (const method of methods) if (!(method === 'HEAD' && methods.includes('GET'))) routes.push(`${method} ${path}`);
  }
  return routes;
}

/** "METHOD /path" for every path and method docs/SECURITY.md's "Paths and methods" table lists. */
function documentedPaths(): string[] {
  const security = fs.readFileSync(path.join(__dirname, '../../../docs/SECURITY.md'), 'utf8');
  const table = security.slice(security.indexOf('### Paths and methods'), security.indexOf('### WebSocket messages'));
  const entries: string[] = [];
  for (const row of table.split('\n').filter((line) => line.startsWith('| '))) {
    const first = row.split(' | ')[0]!;
    for (const named of first.matchAll(/`(GET|POST|PUT|PATCH|DELETE|OPTIONS) (\/[^`]*)`/g)) entries.push(`${named[1]} ${named[2]}`);
    if (first.includes('`Upgrade: websocket` on any path')) entries.push(WEBSOCKET_UPGRADE);
  }
  return entries.sort();
}

/** One request written on a socket of its own, as a client that is not node:http writes it; the answer's text. */
function rawRequest(url: string, requestLine: string, key: string, body: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n\r\n')) socket.destroy();
      resolve(answer);
    });
    socket.on('error', reject);
    socket.write(
      `${requestLine}\r\nHost: gw\r\nContent-Type: application/json\r\nx-api-key: ${key}\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  });
}
