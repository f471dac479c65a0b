/**
 * The fast, fixed-seed slice of the QUIC fuzz (`npm run fuzz:quic` runs a minute of it, or
 * any seed): mutated datagrams at both endpoints, random frames at both connections and
 * altered handshake messages at both TLS machines, without sockets; no exception may escape
 * a state machine and no invariant may break. A few seconds on two cores.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runQuicFuzz } from './fuzz/quic-fuzz';

const SEED = 20_261_127;

describe('QUIC fuzz slice', () => {
  it('150 cases of seed 20261127 against the endpoints, the connections and the TLS handshakes: nothing escapes, no invariant breaks', (t) => {
    const report = runQuicFuzz({ seed: SEED, seconds: 8, cases: 150 });
    t.diagnostic(`${report.cases} cases; inputs thrown: ${JSON.stringify(report.inputs)}`);
    assert.equal(
      report.failure,
      undefined,
      report.failure &&
        `case ${report.failure.caseNumber} (${report.failure.target}): ${report.failure.problem}\ninput: ${report.failure.input}`,
    );
    assert.ok(report.cases >= 60, `only ${report.cases} cases ran`);
    assert.ok(report.inputs.datagrams > 0 && report.inputs.frames > 0 && report.inputs.tls > 0);
  });

  it('replays: the same seed throws the same inputs, case by case', () => {
    const first = runQuicFuzz({ seed: SEED + 1, seconds: 8, cases: 24 });
    const again = runQuicFuzz({ seed: SEED + 1, seconds: 8, cases: 24 });
    assert.equal(first.cases, 24);
    assert.deepEqual(again, first);
    const one = runQuicFuzz({ seed: SEED + 1, seconds: 8, only: 4 });
    assert.equal(one.cases, 1);
  });
});
