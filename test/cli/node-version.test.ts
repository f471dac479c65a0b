/**
 * Which Node.js Slipway runs on: scripts/check-node.sh (run by bin/slipway and npm test
 * before anything is installed) agrees with package.json's "engines", and bin/slipway on an
 * unsupported Node stops with a message naming the supported versions.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import semver from 'semver';
import { SLIPWAY } from '../helpers/process';

const ROOT = path.resolve(__dirname, '../../..');
const ENGINES = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
const CHECK = path.join(ROOT, 'scripts/check-node.sh');

test("check-node.sh accepts exactly the versions package.json's engines accepts", () => {
  const versions = [
    '16.20.2',
    '18.20.4',
    '20.0.0',
    '20.17.1',
    '20.18.0',
    '20.20.2',
    '21.7.3',
    '22.0.0',
    '22.13.1',
    '22.14.0',
    '22.23.3',
    '23.11.1',
    '24.0.0',
    '24.21.0',
    '25.9.0',
    '26.10.0',
    '27.1.0',
    process.versions.node,
  ];
  for (const version of versions) {
    const accepted = spawnSync('sh', [CHECK, version]).status === 0;
    assert.equal(
      accepted,
      semver.satisfies(version, ENGINES),
      `${version}: check-node.sh ${accepted ? 'accepts' : 'refuses'} it, engines "${ENGINES}" does not agree`,
    );
  }
});

test('bin/slipway on an unsupported Node.js stops before installing anything, naming the supported versions', () => {
  const fakeBin = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-old-node-'));
  try {
    // A Node.js 18 as far as the version check can tell: it answers every question with its version.
    fs.writeFileSync(path.join(fakeBin, 'node'), '#!/bin/sh\necho 18.20.4\n', { mode: 0o755 });
    fs.writeFileSync(path.join(fakeBin, 'npm'), '#!/bin/sh\necho npm must not run >&2\nexit 3\n', { mode: 0o755 });
    const run = spawnSync(SLIPWAY, ['serve'], {
      env: { ...process.env, PATH: `${fakeBin}:${process.env.PATH}` },
      encoding: 'utf8',
      timeout: 10_000,
    });
    assert.equal(run.status, 1);
    assert.match(run.stderr, /Node\.js 18\.20\.4 is not supported\. Use Node\.js 22 \(22\.14 or later\), 24 or 26/);
    assert.doesNotMatch(run.stderr, /npm must not run/);
  } finally {
    fs.rmSync(fakeBin, { recursive: true, force: true });
  }
});
