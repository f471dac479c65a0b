/**
 * Our handshakes against Node's own TLS 1.3 (OpenSSL), over TCP in TLS records: the judge of
 * interoperability is an implementation that is not ours. OpenSSL is set up as Solana's TPU
 * servers are (X25519, TLS_AES_128_GCM_SHA256, ALPN solana-tpu, ed25519 certificates, a
 * client certificate asked for). OpenSSL over TCP sends no QUIC transport parameters, so
 * those are not required here; application data both ways proves the application secrets.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import net from 'node:net';
import { describe, it } from 'node:test';
import tls from 'node:tls';
import { ALERT, TlsAlert, TlsClientHandshake, TlsServerHandshake } from '../../src/quic/tls';
import { ed25519Identity, pemOf } from '../helpers/tls-identity';
import { TlsOverTcp } from '../helpers/tls-records';

const ALPN = 'solana-tpu';
const SOLANA_TLS = { minVersion: 'TLSv1.3', ecdhCurve: 'X25519', ciphersuites: 'TLS_AES_128_GCM_SHA256' } as const;

/** The raw ed25519 key of a certificate Node's TLS reports. */
function keyOf(certificate: X509Certificate | undefined): Buffer {
  assert.ok(certificate, 'a peer certificate');
  return certificate.publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

function connectTcp(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('TLS 1.3 handshake against Node/OpenSSL', { timeout: 30_000 }, () => {
  async function withOpenSslServer(
    options: { requestCert: boolean },
    run: (port: number, secure: Promise<tls.TLSSocket>, identity: ReturnType<typeof ed25519Identity>) => Promise<void>,
  ) {
    const identity = ed25519Identity();
    let onSecure!: (socket: tls.TLSSocket) => void;
    let onFailure!: (error: Error) => void;
    const secure = new Promise<tls.TLSSocket>((resolve, reject) => ((onSecure = resolve), (onFailure = reject)));
    secure.catch(() => {}); // awaited by the tests that expect success
    const server = tls.createServer(
      { ...SOLANA_TLS, ...pemOf(identity), ALPNProtocols: [ALPN], requestCert: options.requestCert, rejectUnauthorized: false },
      (socket) => {
        socket.on('data', (data) => socket.write(Buffer.concat([Buffer.from('echo:'), data])));
        socket.on('error', () => {});
        onSecure(socket);
      },
    );
    server.on('tlsClientError', (error) => onFailure(error));
    try {
      await run(await listen(server), secure, identity);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('our client completes with an OpenSSL server that asks for its certificate, which holds its identity', async () => {
    await withOpenSslServer({ requestCert: true }, async (port, secure, serverIdentity) => {
      const identity = ed25519Identity();
      const client = new TlsClientHandshake({
        identity,
        alpn: ALPN,
        transportParameters: Buffer.from('tp'),
        serverName: 'localhost',
        requireTransportParameters: false,
      });
      const socket = await connectTcp(port);
      try {
        const records = new TlsOverTcp(socket, 'client', client);
        records.apply(client.start());
        const completion = await records.done;
        assert.equal(completion.alpn, ALPN);
        assert.equal(completion.peerTransportParameters.length, 0);
        assert.deepEqual(completion.peerIdentity, serverIdentity.publicKey, "the server's ed25519 key, from its certificate");
        const server = await secure;
        assert.equal(server.alpnProtocol, ALPN);
        assert.deepEqual(keyOf(server.getPeerX509Certificate()), identity.publicKey, 'OpenSSL sees our identity in our certificate');
        assert.equal(server.getProtocol(), 'TLSv1.3');
        assert.equal(server.getCipher().standardName, 'TLS_AES_128_GCM_SHA256');
        records.sendApplicationData(Buffer.from('ping'));
        assert.equal((await records.receiveApplicationData(9)).toString(), 'echo:ping', 'application secrets agree both ways');
      } finally {
        socket.destroy();
      }
    });
  });

  it('our client completes with an OpenSSL server that asks for no certificate, and sends none', async () => {
    await withOpenSslServer({ requestCert: false }, async (port, secure) => {
      const client = new TlsClientHandshake({
        identity: ed25519Identity(),
        alpn: ALPN,
        transportParameters: Buffer.alloc(0),
        requireTransportParameters: false,
      });
      const socket = await connectTcp(port);
      try {
        const records = new TlsOverTcp(socket, 'client', client);
        records.apply(client.start());
        await records.done;
        const server = await secure;
        assert.equal(server.getPeerX509Certificate(), undefined);
        records.sendApplicationData(Buffer.from('ping'));
        assert.equal((await records.receiveApplicationData(9)).toString(), 'echo:ping');
      } finally {
        socket.destroy();
      }
    });
  });

  it('our client requires transport parameters by default, which an OpenSSL server over TCP never sends', async () => {
    await withOpenSslServer({ requestCert: true }, async (port) => {
      const client = new TlsClientHandshake({ identity: ed25519Identity(), alpn: ALPN, transportParameters: Buffer.alloc(0) });
      const socket = await connectTcp(port);
      try {
        const records = new TlsOverTcp(socket, 'client', client);
        records.apply(client.start());
        await assert.rejects(records.done, (error) => error instanceof TlsAlert && error.alert === ALERT.missingExtension);
      } finally {
        socket.destroy();
      }
    });
  });

  async function withOurServer(
    options: { requireClientCertificate: boolean; alpn?: string[] },
    run: (port: number, handshakes: Promise<TlsOverTcp>, identity: ReturnType<typeof ed25519Identity>) => Promise<void>,
  ) {
    const identity = ed25519Identity();
    let onConnection!: (records: TlsOverTcp) => void;
    const handshakes = new Promise<TlsOverTcp>((resolve) => (onConnection = resolve));
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
      const handshake = new TlsServerHandshake({
        identity,
        alpn: options.alpn ?? [ALPN],
        transportParameters: Buffer.from('server tp'),
        requireClientCertificate: options.requireClientCertificate,
        requireTransportParameters: false,
      });
      const records = new TlsOverTcp(socket, 'server', handshake);
      records.done.then(
        () => records.receiveApplicationData(4).then((data) => records.sendApplicationData(Buffer.concat([Buffer.from('echo:'), data]))),
        () => {},
      );
      onConnection(records);
    });
    try {
      await run(await listen(server), handshakes, identity);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  function openSslClient(port: number, options: { identity?: ReturnType<typeof ed25519Identity>; alpn?: string }): tls.TLSSocket {
    const socket = tls.connect({
      ...SOLANA_TLS,
      ...(options.identity ? pemOf(options.identity) : {}),
      host: '127.0.0.1',
      port,
      ALPNProtocols: [options.alpn ?? ALPN],
      rejectUnauthorized: false,
    });
    socket.on('error', () => {});
    return socket;
  }

  it('our server completes with an OpenSSL client and reads its identity from its certificate', async () => {
    await withOurServer({ requireClientCertificate: true }, async (port, handshakes, serverIdentity) => {
      const identity = ed25519Identity();
      const client = openSslClient(port, { identity });
      try {
        await new Promise((resolve, reject) => {
          client.once('secureConnect', resolve);
          client.once('error', reject);
          client.once('close', () => reject(new Error('closed before the handshake completed')));
        });
        assert.equal(client.alpnProtocol, ALPN);
        assert.equal(client.getProtocol(), 'TLSv1.3');
        assert.deepEqual(keyOf(client.getPeerX509Certificate()), serverIdentity.publicKey, 'OpenSSL sees the server identity');
        const completion = await (await handshakes).done;
        assert.equal(completion.alpn, ALPN);
        assert.deepEqual(completion.peerIdentity, identity.publicKey, "our server reads the client's identity");
        assert.equal(completion.peerTransportParameters.length, 0);
        client.write('ping');
        const [answer] = (await new Promise((resolve) => client.once('data', (data) => resolve([data])))) as Buffer[];
        assert.equal(answer!.toString(), 'echo:ping', 'application secrets agree both ways');
      } finally {
        client.destroy();
      }
    });
  });

  it('our server refuses an OpenSSL client without a certificate with certificate_required, and OpenSSL sees the alert', async () => {
    await withOurServer({ requireClientCertificate: true }, async (port, handshakes) => {
      const client = openSslClient(port, {});
      try {
        const closed = new Promise<Error | undefined>((resolve) => {
          client.once('error', resolve);
          client.once('close', () => resolve(undefined));
        });
        await assert.rejects((await handshakes).done, (error) => error instanceof TlsAlert && error.alert === ALERT.certificateRequired);
        const error = await closed;
        assert.match(String(error?.message), /certificate required|alert number 116/i);
      } finally {
        client.destroy();
      }
    });
  });

  it('our server refuses an OpenSSL client offering another application protocol with no_application_protocol', async () => {
    await withOurServer({ requireClientCertificate: false }, async (port, handshakes) => {
      const client = openSslClient(port, { identity: ed25519Identity(), alpn: 'h3' });
      try {
        await assert.rejects((await handshakes).done, (error) => error instanceof TlsAlert && error.alert === ALERT.noApplicationProtocol);
      } finally {
        client.destroy();
      }
    });
  });
});
