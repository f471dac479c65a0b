/**
 * The QUIC fuzz against the TLS 1.3 handshake machines (tls/client-handshake.ts,
 * tls/server-handshake.ts) directly: a handshake is recorded message by message, then one
 * side is made again from the same seed (the same key share, so the recorded peer messages
 * are valid for it) and fed the peer's messages with one altered, dropped, repeated, moved,
 * sent at the wrong level or cut into pieces. What may come out is a TlsAlert (not
 * internal_error, which is a bug caught on the way out); a handshake must never complete
 * when a message the transcript covers was altered.
 */
import { TlsAlert, TlsClientHandshake, TlsServerHandshake } from '../../../src/quic/tls';
import { TPU_ALPN } from '../../../src/quic/tpu-handshakes';
import type { EncryptionLevel, TlsOutput } from '../../../src/quic/tls-session';
import { FuzzRandom, mutate } from './fuzz-random';
import { FuzzFailure, identityFrom } from './fuzz-world';

interface Message {
  readonly level: EncryptionLevel;
  readonly data: Buffer;
}

/** Both machines from one seed: the same identities, randoms and key shares every time. */
function machines(seed: number) {
  const random = new FuzzRandom(seed);
  const bytes = (length: number) => random.bytes(length);
  const clientIdentity = identityFrom(random);
  const serverIdentity = identityFrom(random);
  const transportParameters = random.bytes(24);
  const client = new TlsClientHandshake({ identity: clientIdentity, alpn: TPU_ALPN, transportParameters, random: bytes });
  const server = new TlsServerHandshake({
    identity: serverIdentity,
    alpn: [TPU_ALPN],
    transportParameters,
    requireClientCertificate: true,
    random: bytes,
  });
  // The ClientHello is made first on either side, so that the server's randomness comes after it in the stream, as recorded.
  const start = client.start();
  return { client, server, start };
}

/** A flight cut into its handshake messages (a 1-byte type and a 3-byte length each). */
function messagesOf(output: TlsOutput): Message[] {
  const messages: Message[] = [];
  for (const { level, data } of output.send) {
    for (let at = 0; at + 4 <= data.length;) {
      const end = at + 4 + data.readUIntBE(at + 1, 3);
      messages.push({ level, data: data.subarray(at, end) });
      at = end;
    }
  }
  return messages;
}

function record(seed: number): { fromClient: Message[]; fromServer: Message[] } {
  const { client, server, start } = machines(seed);
  const fromServerOutput = server.receive('initial', start.send[0]!.data);
  const fromServer = messagesOf(fromServerOutput);
  let clientOutput: TlsOutput | undefined;
  for (const { level, data } of fromServerOutput.send) clientOutput = client.receive(level, data);
  const fromClient = [...messagesOf(start), ...messagesOf(clientOutput!)];
  const last = server.receive(
    'handshake',
    fromClient
      .slice(1)
      .map((m) => m.data)
      .reduce((a, b) => Buffer.concat([a, b])),
  );
  if (last.complete === undefined) throw new FuzzFailure('the recorded handshake did not complete', undefined);
  return { fromClient, fromServer };
}

export function tlsCase(random: FuzzRandom): number {
  const seed = random.next();
  const recorded = record(seed);
  const side = random.chance(0.5) ? 'client' : 'server';
  const fresh = machines(seed);
  const machine = side === 'client' ? fresh.client : fresh.server;
  // The client receives the server's messages; the server the client's, after its ClientHello.
  const inputs = side === 'client' ? [...recorded.fromServer] : [...recorded.fromClient];
  let altered: boolean;
  const at = random.int(inputs.length);
  const original = inputs[at]!;
  switch (random.int(6)) {
    case 0:
    case 1:
    case 2: {
      const data = mutate(random, original.data);
      altered = !data.equals(original.data);
      inputs[at] = { level: original.level, data };
      break;
    }
    case 3:
      inputs.splice(at, 1);
      altered = true;
      break;
    case 4:
      inputs.splice(random.int(inputs.length + 1), 0, original);
      altered = true;
      break;
    default:
      inputs[at] = { level: random.pick(['initial', 'handshake', 'application'] as const), data: original.data };
      altered = inputs[at]!.level !== original.level;
  }
  let completed = false;
  for (const { level, data } of inputs) {
    // Cut into pieces at random, as CRYPTO frames may deliver a message.
    for (let from = 0; from < data.length || from === 0;) {
      const to = random.chance(0.3) ? Math.min(data.length, from + 1 + random.int(Math.max(1, data.length))) : data.length;
      try {
        const output = machine.receive(level, data.subarray(from, to));
        if (output.complete !== undefined) completed = true;
      } catch (error) {
        if (!(error instanceof TlsAlert))
          throw new FuzzFailure(`the TLS ${side} threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`, data);
        if (error.alert === 80) throw new FuzzFailure(`the TLS ${side} met a bug (internal_error): ${error.message}`, data);
        return inputs.length;
      }
      from = to;
      if (to >= data.length) break;
    }
  }
  if (completed && altered)
    throw new FuzzFailure(`the TLS ${side} completed a handshake although message ${at} was altered`, inputs[at]?.data);
  return inputs.length;
}
