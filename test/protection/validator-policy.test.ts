import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { Keypair } from '@solana/web3.js';
import { createFilePolicySource, parseValidatorPolicy } from '../../src/protection/validator-policy';
import { makeDataDir } from '../helpers/gateway';
import { until } from '../helpers/until';

const [a, b, c] = [Keypair.generate(), Keypair.generate(), Keypair.generate()].map((k) => k.publicKey.toBase58()) as [
  string,
  string,
  string,
];

describe('validator policy', () => {
  it('deny-lists, allow-lists, and deny winning over allow', () => {
    const deny = parseValidatorPolicy({ deny: [a] });
    assert.deepEqual([deny.allows(a), deny.allows(b)], [false, true]);
    const allow = parseValidatorPolicy({ allow: [a, b] });
    assert.deepEqual([allow.allows(a), allow.allows(b), allow.allows(c)], [true, true, false]);
    const both = parseValidatorPolicy({ allow: [a, b], deny: [b] });
    assert.deepEqual([both.allows(a), both.allows(b)], [true, false]);
    assert.equal(parseValidatorPolicy({}).allows(c), true);
    assert.throws(() => parseValidatorPolicy({ deny: ['nope'] }), /deny\.0: must be a validator identity/);
    assert.throws(() => parseValidatorPolicy({ block: [a] }), /block/);
  });

  it('from a file: a change takes effect without a restart; a broken or missing file makes it unknown, saying why', async () => {
    const dir = makeDataDir();
    const file = path.join(dir, 'policy.json');
    try {
      fs.writeFileSync(file, JSON.stringify({ deny: [a] }));
      const source = createFilePolicySource(file, { refreshMs: 20 });
      try {
        const first = source.current();
        assert.ok(first.known && !first.policy.allows(a) && first.policy.allows(b));
        fs.writeFileSync(file, JSON.stringify({ deny: [b] }));
        await until(source.current, (view) => view.known && view.policy.allows(a) && !view.policy.allows(b));
        fs.writeFileSync(file, '{ "deny": [');
        const broken = await until(source.current, (view) => !view.known);
        assert.ok(!broken.known && broken.reason.includes('policy.json cannot be used'), JSON.stringify(broken));
        fs.rmSync(file);
        const missing = await until(source.current, (view) => !view.known && /ENOENT/.test(view.reason));
        assert.ok(!missing.known);
        fs.writeFileSync(file, JSON.stringify({ allow: [c] }));
        await until(source.current, (view) => view.known && view.policy.allows(c) && !view.policy.allows(a));
      } finally {
        source.close();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
