/**
 * deploy/systemd/slipway.service: the hardening docs/DEPLOY.md promises (a user of its own,
 * NoNewPrivileges, ProtectSystem=strict with the data directory alone writable, restarts on
 * failure, a start that waits for /health), the same command and health check as the image
 * (the Containerfile's entrypoint and HEALTHCHECK, under the same /opt/slipway), no secret in
 * the unit, and `systemd-analyze verify` finding nothing to say (where systemd is installed).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { containerfileImage } from './containerfile';

const ROOT = path.resolve(__dirname, '../../..');
const UNIT = path.join(ROOT, 'deploy/systemd/slipway.service');

/** Each directive's values (a directive may repeat), per section. */
export function parseUnit(text: string): Map<string, Map<string, string[]>> {
  const sections = new Map<string, Map<string, string[]>>();
  let current: Map<string, string[]> | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = new Map();
      sections.set(section[1]!, current);
      continue;
    }
    const eq = line.indexOf('=');
    assert.ok(current !== undefined && eq > 0, `not a directive in a section: ${line}`);
    const key = line.slice(0, eq);
    current.set(key, [...(current.get(key) ?? []), line.slice(eq + 1)]);
  }
  return sections;
}

function checkUnit(text: string, containerfile: string): void {
  const service = parseUnit(text).get('Service');
  assert.ok(service !== undefined, 'the unit has a [Service] section');
  const one = (key: string) => {
    const values = service.get(key);
    assert.ok(values !== undefined && values.length === 1, `${key} is set once`);
    return values[0]!;
  };
  const environment = new Map((service.get('Environment') ?? []).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const user = one('User');
  assert.ok(user !== 'root' && user !== '0', 'a user of its own');
  assert.equal(one('NoNewPrivileges'), 'yes');
  assert.equal(one('ProtectSystem'), 'strict');
  assert.equal(one('Restart'), 'on-failure');
  assert.equal(one('KillSignal'), 'SIGTERM', 'stopped with SIGTERM, which serve drains on');
  const dataDir = environment.get('SLIPWAY_DATA_DIR');
  assert.ok(dataDir !== undefined, 'the unit names the data directory');
  assert.deepEqual(one('ReadWritePaths').split(/\s+/), [dataDir], 'the data directory alone is writable');
  assert.equal(`/var/lib/${one('StateDirectory')}`, dataDir, 'systemd makes the data directory (StateDirectory)');
  assert.equal(one('StateDirectoryMode'), '0700', 'the data directory is 0700, as serve demands');

  const image = containerfileImage(containerfile);
  const [node, main, command, ...rest] = one('ExecStart').split(/\s+/);
  assert.match(node!, /\/node$/, 'ExecStart runs node itself');
  assert.equal(main, image.entrypoint[1], "ExecStart runs the CLI the image's entrypoint runs");
  assert.deepEqual([command, ...rest], image.cmd, "ExecStart's command is the image's (serve)");
  const startPost = one('ExecStartPost');
  assert.ok(
    startPost.includes(image.healthcheck[1]!),
    `the start waits on the image's health check (${image.healthcheck[1]}) : ${startPost}`,
  );
  assert.ok(/until .* do sleep/.test(startPost), 'the start waits until the health check passes');
  assert.ok(environment.has('SLIPWAY_PORT'), 'SLIPWAY_PORT is set: the health check reads it');
  for (const secret of ['SLIPWAY_POSTGRES_URL', 'SLIPWAY_REDIS_URL', 'SLIPWAY_METRICS_TOKEN', 'SLIPWAY_DASHBOARD_TOKEN'])
    assert.ok(!environment.has(secret), `${secret} is not written in the unit (EnvironmentFile)`);
  assert.ok(!service.has('MemoryDenyWriteExecute'), "MemoryDenyWriteExecute would stop V8's JIT");
}

describe('deploy/systemd/slipway.service', () => {
  const text = fs.readFileSync(UNIT, 'utf8');
  const containerfile = fs.readFileSync(path.join(ROOT, 'Containerfile'), 'utf8');

  it("is hardened as documented and runs the image's command", () => {
    checkUnit(text, containerfile);
  });

  it('is refused by the same check without its hardening or with another command', () => {
    const broken = (from: string, to: string, message: RegExp) => {
      assert.ok(text.includes(from), from);
      assert.throws(() => checkUnit(text.replace(from, to), containerfile), message);
    };
    broken('NoNewPrivileges=yes', 'NoNewPrivileges=no', /NoNewPrivileges|Expected values to be strictly equal/);
    broken('ProtectSystem=strict', 'ProtectSystem=full', /Expected values to be strictly equal/);
    broken('ReadWritePaths=/var/lib/slipway', 'ReadWritePaths=/var/lib/slipway /opt/slipway', /alone is writable/);
    broken('Restart=on-failure', 'Restart=no', /Expected values to be strictly equal/);
    broken('User=slipway', 'User=root', /a user of its own/);
    broken(
      'ExecStart=/usr/bin/node /opt/slipway/dist/src/cli/main.js serve',
      'ExecStart=/opt/slipway/bin/slipway serve',
      /runs node itself/,
    );
    broken('until /usr/bin/node /opt/slipway/deploy/healthcheck.js; do sleep 1; done', 'true', /health check/);
  });

  it('passes systemd-analyze verify', (t) => {
    if (spawnSync('systemd-analyze', ['--version']).error !== undefined) return t.skip('systemd-analyze is not installed');
    // A copy whose node is this one (verify checks that ExecStart's program exists); the rest as written.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-unit-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const copy = path.join(dir, 'slipway.service');
    fs.writeFileSync(copy, text.replaceAll('/usr/bin/node', process.execPath));
    const run = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 0, `systemd-analyze verify failed:\n${run.stdout}${run.stderr}`);
    const complaints = `${run.stdout}${run.stderr}`.split('\n').filter((l) => l.includes('slipway.service'));
    assert.deepEqual(complaints, [], 'systemd-analyze verify has nothing to say about the unit');
  });
});
