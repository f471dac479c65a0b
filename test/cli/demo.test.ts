import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli } from '../helpers/process';

describe('bin/slipway demo', () => {
  it('runs the whole job on a fresh embedded ledger and every outcome holds', async () => {
    const { code, stdout, stderr } = await runCli(['demo']);
    assert.equal(code, 0, stdout + stderr);
    assert.match(stdout, /member 2: failed on chain/);
    assert.match(stdout, /bundle ID [0-9a-f]{64}/);
    assert.match(stdout, /error -32090: Bundle refused before sending: in its simulation, transaction 2 of 2/);
    assert.equal(stdout.includes('FAIL'), false);
    assert.equal((stdout.match(/ ok  /g) ?? []).length, 6);
    assert.match(stdout, /Every outcome holds\./);
  });
});
