/**
 * Our TLS client and server handshakes against each other, as the QUIC layer drives them:
 * bytes in at a level, secrets and bytes out. Then each rule a peer can break, one test each,
 * by editing the messages between the two (they are plaintext here: QUIC protects them).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sha256 } from '../../src/quic/hkdf';
import {
  ALERT,
  selfSignedCertificate,
  TlsAlert,
  TlsClientHandshake,
  TlsServerHandshake,
  type EncryptionLevel,
  type TlsOutput,
} from '../../src/quic/tls';
import {
  decodeCodeList,
  encodeAlpn,
  encodeCodeList,
  encodeServerKeyShare,
  encodeServerSupportedVersion,
  EXTENSION,
  GROUP_X25519,
  TLS13,
  type Extension,
} from '../../src/quic/tls/extensions';
import { finishedVerifyData, x25519KeyPair } from '../../src/quic/tls/key-schedule';
import { HandshakeMessageBuffer, type HandshakeMessage } from '../../src/quic/tls/message-buffer';
import {
  decodeCertificate,
  decodeClientHello,
  decodeEncryptedExtensions,
  encodeCertificate,
  encodeCertificateRequest,
  encodeClientHello,
  encodeEncryptedExtensions,
  encodeFinished,
  encodeHandshake,
  encodeServerHello,
  HANDSHAKE,
  HELLO_RETRY_REQUEST_RANDOM,
} from '../../src/quic/tls/messages';
import { ed25519Identity } from '../helpers/tls-identity';
import { RFC8448 } from './rfc8448-trace';

const ALPN = 'solana-tpu';

function newClient(options: { alpn?: string; identity?: ReturnType<typeof ed25519Identity> } = {}) {
  const identity = options.identity ?? ed25519Identity();
  const client = new TlsClientHandshake({
    identity,
    alpn: options.alpn ?? ALPN,
    transportParameters: Buffer.from('client parameters'),
    serverName: 'localhost',
  });
  return { identity, client };
}

function newServer(options: { alpn?: string[]; requireClientCertificate?: boolean; requireTransportParameters?: boolean } = {}) {
  const identity = ed25519Identity();
  const server = new TlsServerHandshake({
    identity,
    alpn: options.alpn ?? [ALPN],
    transportParameters: Buffer.from('server parameters'),
    requireClientCertificate: options.requireClientCertificate ?? true,
    ...(options.requireTransportParameters === undefined ? {} : { requireTransportParameters: options.requireTransportParameters }),
  });
  return { identity, server };
}

function dataAt(output: TlsOutput, level: EncryptionLevel): Buffer {
  const entry = output.send.find((send) => send.level === level);
  assert.ok(entry, `bytes to send at ${level}`);
  return entry.data;
}

function messagesOf(bytes: Buffer): HandshakeMessage[] {
  const buffer = new HandshakeMessageBuffer();
  buffer.push(bytes);
  const messages: HandshakeMessage[] = [];
  for (let message = buffer.next(); message; message = buffer.next()) messages.push(message);
  return messages;
}

/** The flight with the message of `type` replaced (or dropped, if `replacement` is null). */
function replaceMessage(flight: Buffer, type: number, replacement: Buffer | null): Buffer {
  const messages = messagesOf(flight);
  assert.ok(
    messages.some((message) => message.type === type),
    `a message of type ${type} in the flight`,
  );
  return Buffer.concat(messages.flatMap((message) => (message.type !== type ? [message.raw] : replacement ? [replacement] : [])));
}

/** The flight with one byte of the message of `type`'s body flipped, `fromEnd` bytes before its end. */
function corruptMessage(flight: Buffer, type: number, fromEnd = 1): Buffer {
  const message = messagesOf(flight).find((candidate) => candidate.type === type)!;
  const raw = Buffer.from(message.raw);
  raw[raw.length - fromEnd]! ^= 0x01;
  return replaceMessage(flight, type, raw);
}

function isAlert(alert: number) {
  return (error: unknown) => {
    assert.ok(error instanceof TlsAlert, `a TlsAlert, not ${String(error)}`);
    assert.equal(error.alert, alert, error.message);
    return true;
  };
}

/** Runs the first flights: the ClientHello into the server, its answer back as far as the ServerHello. */
function upToServerFlight(client: TlsClientHandshake, server: TlsServerHandshake) {
  const clientHello = dataAt(client.start(), 'initial');
  const serverOutput = server.receive('initial', clientHello);
  const serverHello = dataAt(serverOutput, 'initial');
  const clientHandshakeSecrets = client.receive('initial', serverHello);
  return { clientHello, serverOutput, serverHello, serverFlight: dataAt(serverOutput, 'handshake'), clientHandshakeSecrets };
}

/** A whole handshake, each flight delivered in the pieces `split` makes. */
function complete(client: TlsClientHandshake, server: TlsServerHandshake, split: (data: Buffer) => Buffer[] = (data) => [data]) {
  const deliver = (to: TlsClientHandshake | TlsServerHandshake, output: TlsOutput) => {
    const outputs: TlsOutput[] = [];
    for (const { level, data } of output.send) for (const piece of split(data)) outputs.push(to.receive(level, piece));
    return {
      secrets: outputs.flatMap((each) => each.secrets),
      send: outputs.flatMap((each) => each.send),
      complete: outputs.find((each) => each.complete)?.complete,
    };
  };
  const serverFirst = deliver(server, client.start());
  const clientOutput = deliver(client, serverFirst);
  const serverLast = deliver(server, clientOutput);
  return { serverFirst, clientOutput, serverLast };
}

describe('TLS 1.3 handshake, our client with our server', () => {
  it('completes: the same secrets on both sides, the ALPN, both transport parameters, both identities', () => {
    const { client, identity: clientIdentity } = newClient();
    const { server, identity: serverIdentity } = newServer();
    const { serverFirst, clientOutput, serverLast } = complete(client, server);

    assert.deepEqual(
      serverFirst.send.map(({ level }) => level),
      ['initial', 'handshake'],
    );
    assert.deepEqual(
      serverFirst.secrets.map(({ level }) => level),
      ['handshake', 'application'],
    );
    assert.deepEqual(
      clientOutput.secrets.map(({ level }) => level),
      ['handshake', 'application'],
    );
    assert.deepEqual(clientOutput.secrets, serverFirst.secrets, 'both sides derive the same secrets');
    assert.notDeepEqual(clientOutput.secrets[0]!.client, clientOutput.secrets[0]!.server);
    assert.deepEqual(
      clientOutput.send.map(({ level }) => level),
      ['handshake'],
    );

    assert.equal(clientOutput.complete?.alpn, ALPN);
    assert.equal(clientOutput.complete?.peerTransportParameters.toString(), 'server parameters');
    assert.deepEqual(clientOutput.complete?.peerIdentity, serverIdentity.publicKey);
    assert.equal(serverLast.complete?.alpn, ALPN);
    assert.equal(serverLast.complete?.peerTransportParameters.toString(), 'client parameters');
    assert.deepEqual(serverLast.complete?.peerIdentity, clientIdentity.publicKey, "the server reads the client's identity");
    assert.equal(serverLast.send.length, 0);
  });

  it('completes the same with every flight delivered a byte at a time', () => {
    const { client } = newClient();
    const { server } = newServer();
    const bytes = (data: Buffer) => [...data].map((byte) => Buffer.of(byte));
    const { serverFirst, clientOutput, serverLast } = complete(client, server, bytes);
    assert.deepEqual(clientOutput.secrets, serverFirst.secrets);
    assert.ok(clientOutput.complete && serverLast.complete);
  });

  it('takes the ALPN the server prefers among those it accepts, and refuses a client offering none of them (120)', () => {
    const { serverLast } = complete(newClient().client, newServer({ alpn: ['h3', ALPN] }).server);
    assert.equal(serverLast.complete?.alpn, ALPN);
    const { client } = newClient({ alpn: 'h3' });
    const { server } = newServer();
    assert.throws(() => server.receive('initial', dataAt(client.start(), 'initial')), isAlert(ALERT.noApplicationProtocol));
  });

  it('the server requires transport parameters (109) unless told not to, and answers none to a client that sent none', () => {
    const hello = decodeClientHello(dataAt(newClient().client.start(), 'initial').subarray(4));
    const extensions: Extension[] = [...hello.extensions]
      .filter(([type]) => type !== EXTENSION.quicTransportParameters)
      .map(([type, data]) => ({ type, data }));
    const withoutParameters = encodeClientHello({ ...hello, extensions });
    assert.throws(() => newServer().server.receive('initial', withoutParameters), isAlert(ALERT.missingExtension));
    const output = newServer({ requireTransportParameters: false }).server.receive('initial', withoutParameters);
    const [encryptedExtensions] = messagesOf(dataAt(output, 'handshake'));
    assert.equal(encryptedExtensions!.type, HANDSHAKE.encryptedExtensions);
    assert.deepEqual([...decodeEncryptedExtensions(encryptedExtensions!.body).keys()], [EXTENSION.alpn]);
  });

  it('refuses handshake data at the wrong level (10), and repeats the alert on every later call', () => {
    const { client } = newClient();
    const { server } = newServer();
    const clientHello = dataAt(client.start(), 'initial');
    assert.throws(() => server.receive('handshake', clientHello), isAlert(ALERT.unexpectedMessage));
    assert.throws(() => server.receive('initial', clientHello), isAlert(ALERT.unexpectedMessage), 'the same alert again');

    const { client: second } = newClient();
    const output = newServer().server.receive('initial', dataAt(second.start(), 'initial'));
    assert.throws(() => second.receive('handshake', dataAt(output, 'initial')), isAlert(ALERT.unexpectedMessage));

    const { client: third } = newClient();
    const thirdOutput = newServer().server.receive('initial', dataAt(third.start(), 'initial'));
    const both = Buffer.concat([dataAt(thirdOutput, 'initial'), dataAt(thirdOutput, 'handshake')]);
    assert.throws(
      () => third.receive('initial', both),
      isAlert(ALERT.unexpectedMessage),
      'the flight after the ServerHello at the initial level',
    );

    const { client: fourth } = newClient();
    const fourthOutput = newServer().server.receive('initial', dataAt(fourth.start(), 'initial'));
    assert.throws(
      () => fourth.receive('initial', dataAt(fourthOutput, 'handshake')),
      isAlert(ALERT.unexpectedMessage),
      'EncryptedExtensions first',
    );
  });

  it('the server refuses a client without a certificate when required (116), and accepts it without identity otherwise', () => {
    for (const required of [true, false]) {
      const { client } = newClient();
      const { server } = newServer({ requireClientCertificate: required });
      const { clientHello, serverOutput, serverHello, serverFlight } = upToServerFlight(client, server);
      const empty = encodeCertificate({ context: Buffer.alloc(0), certificates: [] });
      if (required) {
        assert.throws(() => server.receive('handshake', empty), isAlert(ALERT.certificateRequired));
        continue;
      }
      const clientSecret = serverOutput.secrets[0]!.client;
      const finished = encodeFinished(finishedVerifyData(clientSecret, sha256(clientHello, serverHello, serverFlight, empty)));
      const output = server.receive('handshake', Buffer.concat([empty, finished]));
      assert.equal(output.complete?.alpn, ALPN);
      assert.equal(output.complete?.peerIdentity, undefined);
    }
  });

  it('the server refuses a client certificate that is not ed25519 (42), a bad CertificateVerify (51), a bad Finished (51)', () => {
    const clientFlight = () => {
      const { client } = newClient();
      const { server } = newServer();
      const { serverFlight } = upToServerFlight(client, server);
      return { server, flight: dataAt(client.receive('handshake', serverFlight), 'handshake') };
    };
    let { server, flight } = clientFlight();
    const rsa = decodeCertificate(messagesOf(RFC8448.serverFlight)[1]!.body).certificates[0]!;
    const rsaCertificate = encodeCertificate({ context: Buffer.alloc(0), certificates: [rsa] });
    assert.throws(
      () => server.receive('handshake', replaceMessage(flight, HANDSHAKE.certificate, rsaCertificate)),
      isAlert(ALERT.badCertificate),
    );
    ({ server, flight } = clientFlight());
    assert.throws(() => server.receive('handshake', corruptMessage(flight, HANDSHAKE.certificateVerify)), isAlert(ALERT.decryptError));
    ({ server, flight } = clientFlight());
    assert.throws(() => server.receive('handshake', corruptMessage(flight, HANDSHAKE.finished)), isAlert(ALERT.decryptError));
    ({ server, flight } = clientFlight());
    assert.throws(() => server.receive('handshake', replaceMessage(flight, HANDSHAKE.certificate, null)), isAlert(ALERT.unexpectedMessage));
  });

  it("the client refuses the server's bad certificate (42), CertificateVerify (51), Finished (51), or none (50)", () => {
    const flight = () => {
      const { client } = newClient();
      return { client, serverFlight: upToServerFlight(client, newServer().server).serverFlight };
    };
    let { client, serverFlight } = flight();
    const garbage = encodeCertificate({ context: Buffer.alloc(0), certificates: [Buffer.from('not a certificate')] });
    assert.throws(
      () => client.receive('handshake', replaceMessage(serverFlight, HANDSHAKE.certificate, garbage)),
      isAlert(ALERT.badCertificate),
    );
    ({ client, serverFlight } = flight());
    assert.throws(
      () => client.receive('handshake', corruptMessage(serverFlight, HANDSHAKE.certificateVerify)),
      isAlert(ALERT.decryptError),
    );
    ({ client, serverFlight } = flight());
    assert.throws(() => client.receive('handshake', corruptMessage(serverFlight, HANDSHAKE.finished)), isAlert(ALERT.decryptError));
    ({ client, serverFlight } = flight());
    const none = encodeCertificate({ context: Buffer.alloc(0), certificates: [] });
    assert.throws(() => client.receive('handshake', replaceMessage(serverFlight, HANDSHAKE.certificate, none)), isAlert(ALERT.decodeError));
  });

  it("refuses a certificate of another identity (51), even with a Finished that matches: claiming another node's stake", () => {
    const other = selfSignedCertificate(ed25519Identity());
    const otherCertificate = encodeCertificate({ context: Buffer.alloc(0), certificates: [other] });
    // A peer that swaps the certificate holds the handshake keys, so it can make its Finished match what it sent.
    const refinish = (flight: Buffer, secret: Buffer, before: Buffer[]) => {
      const messages = messagesOf(flight).filter((message) => message.type !== HANDSHAKE.finished);
      const finished = encodeFinished(finishedVerifyData(secret, sha256(...before, ...messages.map((message) => message.raw))));
      return Buffer.concat([...messages.map((message) => message.raw), finished]);
    };

    const { client } = newClient();
    const { clientHello, serverHello, serverFlight, serverOutput } = upToServerFlight(client, newServer().server);
    const forged = refinish(replaceMessage(serverFlight, HANDSHAKE.certificate, otherCertificate), serverOutput.secrets[0]!.server, [
      clientHello,
      serverHello,
    ]);
    assert.throws(() => client.receive('handshake', forged), isAlert(ALERT.decryptError));

    const { client: second } = newClient();
    const { server } = newServer();
    const first = upToServerFlight(second, server);
    const flight = dataAt(second.receive('handshake', first.serverFlight), 'handshake');
    const before = [first.clientHello, first.serverHello, first.serverFlight];
    const forgedClient = refinish(
      replaceMessage(flight, HANDSHAKE.certificate, otherCertificate),
      first.serverOutput.secrets[0]!.client,
      before,
    );
    assert.throws(() => server.receive('handshake', forgedClient), isAlert(ALERT.decryptError));
  });

  it('the client checks EncryptedExtensions: the ALPN (120, 47), transport parameters (109), unsolicited (110) or misplaced (47) extensions', () => {
    const alpn = { type: EXTENSION.alpn, data: encodeAlpn([ALPN]) };
    const parameters = { type: EXTENSION.quicTransportParameters, data: Buffer.from('p') };
    const cases: [Extension[], number][] = [
      [[parameters], ALERT.noApplicationProtocol],
      [[{ type: EXTENSION.alpn, data: encodeAlpn(['h3']) }, parameters], ALERT.illegalParameter],
      [[{ type: EXTENSION.alpn, data: encodeAlpn([ALPN, ALPN]) }, parameters], ALERT.illegalParameter],
      [[alpn], ALERT.missingExtension],
      [[alpn, parameters, { type: 0x1234, data: Buffer.alloc(0) }], ALERT.unsupportedExtension],
      [[alpn, parameters, { type: EXTENSION.keyShare, data: Buffer.alloc(0) }], ALERT.illegalParameter],
      [[alpn, parameters, { type: EXTENSION.serverName, data: Buffer.from('x') }], ALERT.decodeError],
    ];
    for (const [extensions, alert] of cases) {
      const { client } = newClient();
      const { serverFlight } = upToServerFlight(client, newServer().server);
      const flight = replaceMessage(serverFlight, HANDSHAKE.encryptedExtensions, encodeEncryptedExtensions(extensions));
      assert.throws(() => client.receive('handshake', flight), isAlert(alert), JSON.stringify(extensions.map(({ type }) => type)));
    }
  });

  it('the client refuses a CertificateRequest without ed25519 (40)', () => {
    const { client } = newClient();
    const { serverFlight } = upToServerFlight(client, newServer().server);
    const request = encodeCertificateRequest({
      context: Buffer.alloc(0),
      extensions: [{ type: EXTENSION.signatureAlgorithms, data: encodeCodeList([0x0403]) }],
    });
    assert.throws(
      () => client.receive('handshake', replaceMessage(serverFlight, HANDSHAKE.certificateRequest, request)),
      isAlert(ALERT.handshakeFailure),
    );
  });

  it('the client refuses every HelloRetryRequest: for another group or X25519 (47), with a cookie alone (40)', () => {
    const retry = (extensions: Extension[]) =>
      encodeServerHello({ random: HELLO_RETRY_REQUEST_RANDOM, sessionId: Buffer.alloc(0), cipherSuite: 0x1301, extensions });
    const version = { type: EXTENSION.supportedVersions, data: encodeServerSupportedVersion(TLS13) };
    const group = (code: number) => ({ type: EXTENSION.keyShare, data: Buffer.from([code >> 8, code & 0xff]) });
    const cases: [Buffer, number][] = [
      [retry([version, group(0x0017)]), ALERT.illegalParameter],
      [retry([version, group(GROUP_X25519)]), ALERT.illegalParameter],
      [retry([version, { type: EXTENSION.cookie, data: Buffer.from('0003abcdef', 'hex') }]), ALERT.handshakeFailure],
    ];
    for (const [message, alert] of cases) {
      const { client } = newClient();
      client.start();
      assert.throws(() => client.receive('initial', message), isAlert(alert));
    }
  });

  it('the client checks the ServerHello: version (70, 47), suite (47), session ID (47), key share (47, 109), extensions (110)', () => {
    const key = x25519KeyPair().publicKey;
    const version = (code: number) => ({ type: EXTENSION.supportedVersions, data: encodeServerSupportedVersion(code) });
    const share = (group: number, bytes = key) => ({ type: EXTENSION.keyShare, data: encodeServerKeyShare({ group, key: bytes }) });
    const hello = (extensions: Extension[], fields: { cipherSuite?: number; sessionId?: Buffer } = {}) =>
      encodeServerHello({
        random: Buffer.alloc(32, 7),
        sessionId: fields.sessionId ?? Buffer.alloc(0),
        cipherSuite: fields.cipherSuite ?? 0x1301,
        extensions,
      });
    const cases: [Buffer, number][] = [
      [hello([share(GROUP_X25519)]), ALERT.protocolVersion],
      [hello([version(0x0303), share(GROUP_X25519)]), ALERT.illegalParameter],
      [hello([version(TLS13), share(GROUP_X25519)], { cipherSuite: 0x1302 }), ALERT.illegalParameter],
      [hello([version(TLS13), share(GROUP_X25519)], { sessionId: Buffer.alloc(32, 1) }), ALERT.illegalParameter],
      [hello([version(TLS13), share(0x0017)]), ALERT.illegalParameter],
      [hello([version(TLS13), share(GROUP_X25519, key.subarray(0, 31))]), ALERT.illegalParameter],
      [hello([version(TLS13), share(GROUP_X25519, Buffer.alloc(32))]), ALERT.illegalParameter], // a low-order point: the all-zero secret
      [hello([version(TLS13)]), ALERT.missingExtension],
      [hello([version(TLS13), share(GROUP_X25519), { type: 0xff01, data: Buffer.of(0) }]), ALERT.unsupportedExtension],
      [hello([version(TLS13), share(GROUP_X25519), { type: EXTENSION.alpn, data: encodeAlpn([ALPN]) }]), ALERT.illegalParameter],
    ];
    for (const [message, alert] of cases) {
      const { client } = newClient();
      client.start();
      assert.throws(() => client.receive('initial', message), isAlert(alert));
    }
  });

  it('the server checks the ClientHello: TLS 1.3 (70), the suite (40), X25519 (40), ed25519 (40), the extensions it needs (109)', () => {
    const original = decodeClientHello(dataAt(newClient().client.start(), 'initial').subarray(4));
    const extensionsOf = (hello: typeof original): Extension[] => [...hello.extensions].map(([type, data]) => ({ type, data }));
    const edit = (type: number, data: Buffer | null, fields: { cipherSuites?: number[] } = {}) => {
      const extensions: Extension[] = [];
      for (const [each, value] of original.extensions) {
        if (each !== type) extensions.push({ type: each, data: value });
        else if (data) extensions.push({ type: each, data });
      }
      return encodeClientHello({ ...original, cipherSuites: fields.cipherSuites ?? original.cipherSuites, extensions });
    };
    const cases: [Buffer, number][] = [
      [edit(EXTENSION.supportedVersions, null), ALERT.protocolVersion],
      [edit(EXTENSION.supportedVersions, Buffer.from('020303', 'hex')), ALERT.protocolVersion],
      [edit(0, null, { cipherSuites: [0x1302, 0x1303] }), ALERT.handshakeFailure],
      [edit(EXTENSION.signatureAlgorithms, encodeCodeList([0x0403])), ALERT.handshakeFailure],
      [edit(EXTENSION.signatureAlgorithms, null), ALERT.missingExtension],
      [edit(EXTENSION.keyShare, null), ALERT.missingExtension],
      [edit(EXTENSION.supportedGroups, null), ALERT.missingExtension],
      [edit(EXTENSION.keyShare, Buffer.from('0000', 'hex')), ALERT.handshakeFailure],
      [edit(EXTENSION.supportedGroups, encodeCodeList([0x0017])), ALERT.illegalParameter],
      [edit(EXTENSION.alpn, null), ALERT.noApplicationProtocol],
      [encodeClientHello({ ...original, sessionId: Buffer.alloc(32, 1), extensions: extensionsOf(original) }), ALERT.illegalParameter], // RFC 9001 §8.4
    ];
    for (const [message, alert] of cases) {
      assert.throws(() => newServer().server.receive('initial', message), isAlert(alert));
    }
    assert.deepEqual(
      decodeCodeList(original.extensions.get(EXTENSION.signatureAlgorithms)!, 'signature_algorithms'),
      [0x0807, 0x0403, 0x0804],
    );
  });

  it('after the handshake, the client ignores NewSessionTicket but refuses KeyUpdate (10); the server takes nothing more', () => {
    const { client } = newClient();
    const { server } = newServer();
    complete(client, server);
    const ticket = encodeHandshake(HANDSHAKE.newSessionTicket, Buffer.from('00000e10000000000000000000', 'hex'));
    assert.deepEqual(client.receive('application', Buffer.concat([ticket, ticket])), { secrets: [], send: [] });
    assert.throws(
      () => client.receive('application', encodeHandshake(HANDSHAKE.keyUpdate, Buffer.of(0))),
      isAlert(ALERT.unexpectedMessage),
    );
    assert.throws(() => server.receive('application', ticket), isAlert(ALERT.unexpectedMessage));
  });
});
