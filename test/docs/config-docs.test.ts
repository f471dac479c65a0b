/**
 * Every setting is declared once (src/config/settings.ts): docs/CONFIG.md's table is what
 * `npm run docs` makes from it, the configuration file takes exactly its settings (and the
 * network), each setting's environment variable and flag reach the configuration, and a
 * value outside a setting's range is refused naming the setting.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { withSettingsTable } from '../../src/config/config-docs';
import { parseConfigFile } from '../../src/config/config-file';
import { resolveConfig } from '../../src/config/config';
import { settingFlags, settingsFromFlags } from '../../src/config/flags';
import { SETTINGS, type SettingName } from '../../src/config/settings';

const DOCS = path.resolve(__dirname, '../../../docs');
const names = Object.keys(SETTINGS) as SettingName[];

/** A value of the setting's type other than its default. */
function otherValue(name: SettingName): string {
  const setting = SETTINGS[name];
  switch (setting.kind) {
    case 'integer':
      return String(setting.default < setting.max ? setting.default + 1 : setting.default - 1);
    case 'decimal':
      return String(setting.default + 0.5 <= setting.max ? setting.default + 0.5 : setting.default - 0.5);
    case 'choice':
      return setting.choices.find((choice) => choice !== setting.default)!;
    case 'boolean':
      return String(!setting.default);
    case 'list':
      return name === 'readMethods' ? 'getSlot,getHealth' : '';
    case 'text':
      return name === 'redisUrl' ? 'redis://127.0.0.1:6390/0' : name === 'tipFloorUrl' ? 'https://engine.example/api/v1/bundles/tip_floor' : name === 'postgresUrl' ? 'postgres://p@127.0.0.1:5499/x' : name === 'postgresSchema' ? 'other_schema' : name === 'dataDir' ? '/tmp/slipway-config-docs' : `other-${name}`;
  }
}

describe('the settings table', () => {
  it("docs/CONFIG.md's settings table is current (npm run docs writes it)", () => {
    const doc = fs.readFileSync(path.join(DOCS, 'CONFIG.md'), 'utf8');
    assert.equal(doc, withSettingsTable(doc), 'run npm run docs');
  });

  it('each environment variable reaches its setting, and the configuration file takes the same names', () => {
    for (const name of names) {
      const value = otherValue(name);
      if (value === '') continue;
      const fromEnv = resolveConfig({}, { [SETTINGS[name].env]: value });
      const expected = fromEnv[name];
      assert.notDeepEqual(expected, SETTINGS[name].default, `${name} from ${SETTINGS[name].env}`);
      const setting = SETTINGS[name];
      const fileValue = setting.kind === 'integer' || setting.kind === 'decimal' ? Number(value) : setting.kind === 'boolean' ? value === 'true' : setting.kind === 'list' ? value.split(',') : value;
      const file = parseConfigFile({ [name]: fileValue }, 'test');
      assert.deepEqual(resolveConfig(file.settings as Record<string, string>, {})[name], expected, `${name} from the file`);
    }
    assert.throws(() => parseConfigFile({ notASetting: 1 }, 'test'), /notASetting|Unrecognized key/);
  });

  it("each command's flags reach their settings", () => {
    for (const command of ['serve', 'ledger'] as const) {
      for (const [flag] of Object.entries(settingFlags(command))) {
        const name = names.find((n) => (SETTINGS[n] as { flags?: Record<string, string> }).flags?.[command] === `--${flag}`)!;
        const value = otherValue(name);
        if (value === '') continue;
        assert.deepEqual(resolveConfig(settingsFromFlags(command, { [flag]: value }), {})[name], resolveConfig({}, { [SETTINGS[name].env]: value })[name], `${command} --${flag}`);
      }
    }
  });

  it('a refusal says where the value came from: the flag, the variable or the configuration file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-config-'));
    try {
      const file = path.join(dir, 'slipway.config.json');
      fs.writeFileSync(file, JSON.stringify({ maxSubscriptions: 0 }));
      assert.throws(() => resolveConfig({ config: file }, {}), {
        message: `maxSubscriptions must be an integer from 1 to 10000000 (got "0"; in the configuration file ${file})`,
      });
      assert.throws(() => resolveConfig({ config: file }, { SLIPWAY_MAX_SUBSCRIPTIONS: '-1' }), /\(got "-1"; env SLIPWAY_MAX_SUBSCRIPTIONS\)$/);
      assert.throws(() => resolveConfig(settingsFromFlags('serve', { port: '99999' }), {}), /^Error: port must be an integer from 0 to 65535 \(got "99999"; given as --port\)$/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a decimal outside its range, or not a number, is refused, naming the setting, its range and its variable', () => {
    for (const name of names) {
      const setting = SETTINGS[name];
      if (setting.kind !== 'decimal') continue;
      for (const bad of [String(setting.max + 0.5), String(setting.min - 0.5), 'two', '', 'Infinity']) {
        const shown = JSON.stringify(bad).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        assert.throws(
          () => resolveConfig({}, { [setting.env]: bad }),
          new RegExp(`^Error: ${name} must be a number from ${setting.min} to ${setting.max} \\(got ${shown}; env ${setting.env}\\)$`),
        );
      }
    }
  });

  it('an integer outside its range is refused, naming the setting, its range and its variable', () => {
    for (const name of names) {
      const setting = SETTINGS[name];
      if (setting.kind !== 'integer') continue;
      assert.throws(() => resolveConfig({}, { [setting.env]: String(setting.max + 1) }), new RegExp(`^Error: ${name} must be an integer from ${setting.min} to ${setting.max} \\(got "${setting.max + 1}"; env ${setting.env}\\)$`));
    }
  });
});
