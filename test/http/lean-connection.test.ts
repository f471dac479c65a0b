/**
 * Lean HTTP's connection state machine (src/http/lean-connection.ts) without sockets:
 * bytes and events in, steps and phases out, admission counted by a fake gate. The driver
 * (lean-http.ts) on real sockets is tested in lean-http.test.ts and lean-http-attacks.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { LeanConnection, type LeanGate, type LeanStep, type Serving } from '../../src/http/lean-connection';
import type { ApiKeyRecord } from '../../src/stores/key-store';

const LIMITS = { maxHeadBytes: 8 * 1024, bodyLimit: 64 * 1024 };

/** A request in lean HTTP's form, with `body`; `close` asks for Connection: close. */
function request(body: string, { key = 'good', close = false, path = '/' } = {}): Buffer {
  const length = Buffer.byteLength(body);
  const connection = close ? 'Connection: close\r\n' : '';
  return Buffer.from(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nx-api-key: ${key}\r\n${connection}Content-Length: ${length}\r\n\r\n${body}`,
  );
}

/** A gate that knows the key `good`, refuses past `capacity` requests in progress, and records every call. */
function fakeGate(capacity = Infinity) {
  const record = { id: 'k1' } as ApiKeyRecord;
  const calls: { entered: number; left: number; begunBeforeClose: boolean[] } = { entered: 0, left: 0, begunBeforeClose: [] };
  const gate: LeanGate = {
    enter(apiKey, begunBeforeClose) {
      calls.begunBeforeClose.push(begunBeforeClose);
      if (apiKey !== 'good' || calls.entered - calls.left >= capacity) return null;
      calls.entered += 1;
      return record;
    },
    leave(key) {
      assert.equal(key, record);
      calls.left += 1;
      assert.ok(calls.left <= calls.entered, 'a place given back that was never taken');
    },
  };
  return { gate, calls, inProgress: () => calls.entered - calls.left };
}

const serving = (connection: LeanConnection): Serving => {
  assert.equal(connection.phase.kind, 'serving');
  return connection.phase as Serving;
};

describe('lean connection: one request', () => {
  it('a request in one chunk is served; answered and kept alive, the connection is idle with its places given back', () => {
    const { gate, inProgress } = fakeGate();
    const connection = new LeanConnection(LIMITS, gate);
    assert.equal(connection.awaitingRequest, true, 'the first request is awaited before a byte has come');
    assert.equal(connection.received(request('{"a":1}')), 'serve');
    const served = serving(connection);
    assert.equal(served.body, '{"a":1}');
    assert.equal(served.head.path, '/');
    assert.equal(inProgress(), 1);
    assert.equal(connection.awaitingRequest, false, 'no wait while serving');
    assert.equal(connection.answered(served, false), 'wait');
    assert.equal(connection.phase.kind, 'reading-head');
    assert.equal(connection.idle, true);
    assert.equal(connection.awaitingRequest, false, 'between requests the idle time-out applies, not the wait');
    assert.equal(inProgress(), 0);
  });

  it('a request split at every byte is admitted once, when its head is whole, and served when its body is', () => {
    const whole = request('{"jsonrpc":"2.0","id":1}');
    const headLength = whole.indexOf('\r\n\r\n') + 4;
    for (let split = 1; split < whole.length; split++) {
      const { gate, calls } = fakeGate();
      const connection = new LeanConnection(LIMITS, gate);
      const steps: LeanStep[] = [];
      for (let at = 0; at < whole.length; at += split) steps.push(connection.received(whole.subarray(at, at + split)));
      assert.deepEqual(steps.slice(0, -1), Array(steps.length - 1).fill('wait'), `split ${split}`);
      assert.equal(steps.at(-1), 'serve', `split ${split}`);
      assert.equal(calls.begunBeforeClose.length, 1, `split ${split}: the head is admitted once`);
      assert.equal(serving(connection).body, '{"jsonrpc":"2.0","id":1}');
      if (split < headLength) assert.equal(calls.entered, 1);
    }
  });

  it('Connection: close: the answer finishes the connection, and what came after it is not served', () => {
    const { gate, inProgress } = fakeGate();
    const connection = new LeanConnection(LIMITS, gate);
    assert.equal(connection.received(Buffer.concat([request('1', { close: true }), request('2')])), 'serve');
    assert.equal(connection.answered(serving(connection), true), 'finish');
    assert.equal(connection.phase.kind, 'closed');
    assert.equal(inProgress(), 0);
    assert.equal(connection.received(request('3')), 'wait', 'a closed connection takes nothing');
  });
});

describe('lean connection: pipelining', () => {
  it('requests pipelined in one chunk are served one at a time, in order; bytes during an answer wait their turn', () => {
    const { gate, inProgress } = fakeGate();
    const connection = new LeanConnection(LIMITS, gate);
    assert.equal(connection.received(Buffer.concat([request('1'), request('2')])), 'serve');
    const first = serving(connection);
    assert.equal(connection.received(request('3')), 'wait', 'never two at once');
    assert.equal(inProgress(), 1);
    assert.equal(connection.answered(first, false), 'serve');
    const second = serving(connection);
    assert.equal(second.body, '2');
    assert.equal(connection.answered(second, false), 'serve');
    assert.equal(serving(connection).body, '3');
    assert.equal(connection.answered(serving(connection), false), 'wait');
    assert.equal(inProgress(), 0);
  });
});

describe('lean connection: handing over to node:http', () => {
  it('a request outside the form hands over with every byte not yet served, and nothing left counted', () => {
    const { gate, inProgress } = fakeGate();
    const connection = new LeanConnection(LIMITS, gate);
    const other = Buffer.from('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(connection.received(Buffer.concat([request('1'), other])), 'serve');
    assert.equal(connection.answered(serving(connection), false), 'hand-over');
    assert.deepEqual(connection.phase, { kind: 'handed-over', reason: 'form' });
    assert.deepEqual(connection.takeRest(), other);
    assert.equal(connection.takeRest(), null, 'lean HTTP holds nothing afterwards');
    assert.equal(inProgress(), 0);
  });

  it('a refusal on arrival (unknown key, or no place) hands over with the whole request for node:http to refuse', () => {
    for (const [key, capacity] of [
      ['unknown', Infinity],
      ['good', 0],
    ] as const) {
      const { gate, inProgress } = fakeGate(capacity);
      const connection = new LeanConnection(LIMITS, gate);
      const sent = request('{}', { key });
      assert.equal(connection.received(sent), 'hand-over');
      assert.deepEqual(connection.phase, { kind: 'handed-over', reason: 'refused' });
      assert.deepEqual(connection.takeRest(), sent);
      assert.equal(inProgress(), 0);
    }
  });

  it('the wait running out: a head not whole, or a body not whole (its places given back), goes to node:http', () => {
    const whole = request('{"much":"body"}');
    for (const cut of [10, whole.length - 3]) {
      const { gate, inProgress } = fakeGate();
      const connection = new LeanConnection(LIMITS, gate);
      assert.equal(connection.received(whole.subarray(0, cut)), 'wait');
      assert.equal(connection.awaitingRequest, true);
      assert.equal(connection.waitExpired(), 'hand-over');
      assert.deepEqual(connection.phase, { kind: 'handed-over', reason: 'incomplete' });
      assert.deepEqual(connection.takeRest(), whole.subarray(0, cut));
      assert.equal(inProgress(), 0);
    }
  });

  it('a connection that sends nothing goes to node:http when the first wait runs out; between requests the wait does not apply', () => {
    const fresh = new LeanConnection(LIMITS, fakeGate().gate);
    assert.equal(fresh.waitExpired(), 'hand-over');
    assert.equal(fresh.takeRest(), null);
    const used = new LeanConnection(LIMITS, fakeGate().gate);
    used.received(request('1'));
    used.answered(serving(used), false);
    assert.equal(used.waitExpired(), 'wait');
    assert.equal(used.phase.kind, 'reading-head');
  });
});

describe("lean connection: the client's FIN", () => {
  it('with nothing unserved the connection finishes; a request cut short is handed over for node:http to answer 400', () => {
    const idle = new LeanConnection(LIMITS, fakeGate().gate);
    assert.equal(idle.peerEnd(), 'finish');
    const { gate, inProgress } = fakeGate();
    const cut = new LeanConnection(LIMITS, gate);
    assert.equal(cut.received(request('{"x":1}').subarray(0, -2)), 'wait');
    assert.equal(cut.peerEnd(), 'hand-over');
    assert.equal(inProgress(), 0);
  });

  it('during an answer: the rest that came whole is served, then the connection finishes', () => {
    const { gate, inProgress } = fakeGate();
    const connection = new LeanConnection(LIMITS, gate);
    assert.equal(connection.received(Buffer.concat([request('1'), request('2')])), 'serve');
    const first = serving(connection);
    assert.equal(connection.peerEnd(), 'wait');
    assert.equal(connection.answered(first, false), 'serve');
    assert.equal(connection.answered(serving(connection), false), 'finish');
    assert.equal(inProgress(), 0);
  });
});

describe('lean connection: the gateway closing, the socket closing', () => {
  it('an idle connection is destroyed at once; a busy one is not', () => {
    assert.equal(new LeanConnection(LIMITS, fakeGate().gate).closeGateway(), 'destroy');
    const busy = new LeanConnection(LIMITS, fakeGate().gate);
    busy.received(request('1'));
    assert.equal(busy.closeGateway(), 'wait');
    assert.equal(busy.phase.kind, 'serving');
  });

  it('a head not whole when closing began is admitted as begun after it (node:http refuses it 503); a whole head as begun before', () => {
    const whole = request('{}');
    const partHead = fakeGate();
    const connection = new LeanConnection(LIMITS, partHead.gate);
    connection.received(whole.subarray(0, 10));
    connection.closeGateway();
    connection.received(whole.subarray(10));
    assert.deepEqual(partHead.calls.begunBeforeClose, [false]);
    const partBody = fakeGate();
    const other = new LeanConnection(LIMITS, partBody.gate);
    other.received(whole.subarray(0, -1));
    other.closeGateway();
    assert.equal(other.received(whole.subarray(-1)), 'serve');
    assert.deepEqual(partBody.calls.begunBeforeClose, [true]);
  });

  it('the socket closing gives back the places of a request admitted on its head; one being answered gives them back on its answer', () => {
    const reading = fakeGate();
    const midBody = new LeanConnection(LIMITS, reading.gate);
    midBody.received(request('{"x":1}').subarray(0, -1));
    assert.equal(reading.inProgress(), 1);
    midBody.closed();
    assert.equal(reading.inProgress(), 0);
    assert.equal(midBody.phase.kind, 'closed');

    const answering = fakeGate();
    const midAnswer = new LeanConnection(LIMITS, answering.gate);
    midAnswer.received(request('1'));
    const served = serving(midAnswer);
    midAnswer.closed();
    assert.equal(answering.inProgress(), 1, 'still being answered');
    assert.equal(midAnswer.answered(served, true), 'wait', 'nothing to do on a closed connection');
    assert.equal(answering.inProgress(), 0);
  });
});

describe('lean connection: any sequence of events', () => {
  it('serves the requests in order, never two at once, and gives back every place exactly once', () => {
    const event = fc.oneof(
      fc.record({ kind: fc.constant('bytes' as const), cut: fc.integer({ min: 1, max: 300 }) }),
      fc.constant({ kind: 'answer' as const }),
      fc.constant({ kind: 'wait-expired' as const }),
      fc.constant({ kind: 'idle-expired' as const }),
      fc.constant({ kind: 'gateway-closing' as const }),
      fc.constant({ kind: 'peer-end' as const }),
      fc.constant({ kind: 'socket-closed' as const }),
    );
    const wire = fc.array(
      fc.record({ body: fc.string({ maxLength: 40 }), key: fc.constantFrom('good', 'good', 'good', 'bad'), form: fc.boolean() }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(wire, fc.array(event, { maxLength: 40 }), fc.integer({ min: 0, max: 3 }), (requests, events, capacity) => {
        const { gate, inProgress } = fakeGate(capacity);
        const connection = new LeanConnection(LIMITS, gate);
        const bytes = Buffer.concat(
          requests.map(({ body, key, form }) => (form ? request(body, { key }) : Buffer.from(`PUT /${body.length} HTTP/1.1\r\n\r\n`))),
        );
        let sent = 0;
        let answering: Serving | null = null;
        const served: string[] = [];
        const take = (step: LeanStep) => {
          if (step === 'serve') {
            assert.equal(answering, null, 'two requests served at once');
            answering = serving(connection);
            served.push(answering.body);
          }
        };
        for (const e of events) {
          if (e.kind === 'bytes' && sent < bytes.length) {
            take(connection.received(bytes.subarray(sent, sent + e.cut)));
            sent += e.cut;
          } else if (e.kind === 'answer' && answering !== null) {
            const request: Serving = answering;
            answering = null;
            take(connection.answered(request, !request.head.keepAlive));
          } else if (e.kind === 'wait-expired') take(connection.waitExpired());
          else if (e.kind === 'idle-expired') take(connection.idleExpired());
          else if (e.kind === 'gateway-closing') take(connection.closeGateway());
          else if (e.kind === 'peer-end') take(connection.peerEnd());
          else if (e.kind === 'socket-closed') connection.closed();
          assert.ok(inProgress() <= (answering === null ? 0 : 1) + (connection.phase.kind === 'reading-body' ? 1 : 0));
        }
        if (answering !== null) connection.answered(answering, true);
        connection.closed();
        assert.equal(inProgress(), 0, 'every place given back');
        const inForm = requests.filter((r) => r.form).map((r) => r.body);
        assert.deepEqual(served, inForm.slice(0, served.length), 'served in order, each once');
      }),
      { numRuns: 2_000 },
    );
  });
});
