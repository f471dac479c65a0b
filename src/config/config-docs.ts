/**
 * The settings table of docs/CONFIG.md, made from the settings table (settings.ts):
 * `bin/slipway api-docs` writes it between the markers, and a test fails when the file
 * and the code disagree.
 */
import { SETTINGS, type Setting } from './settings';

export const SETTINGS_TABLE_START = '<!-- settings table: written by bin/slipway api-docs from src/config/settings.ts -->';
export const SETTINGS_TABLE_END = '<!-- end of settings table -->';

function shownDefault(setting: Setting): string {
  if (setting.shownDefault !== undefined) return setting.shownDefault;
  if (setting.kind === 'list' || setting.default === '') return 'none';
  return `\`${String(setting.default)}\``;
}

function shownFlag(setting: Setting): string {
  if (setting.flags?.serve !== undefined) return `\`${setting.flags.serve}\``;
  if (setting.flags?.ledger !== undefined) return `\`${setting.flags.ledger}\` (\`bin/slipway ledger\`)`;
  return '—';
}

/** The markdown table, one row per setting, then the configuration file's own row. */
export function settingsTableMarkdown(): string {
  const rows = Object.entries(SETTINGS).map(([name, setting]: [string, Setting]) => {
    const variable = `\`${setting.env}\`${setting.kind === 'list' ? ' (comma-separated)' : ''}`;
    return `| ${name} | ${shownDefault(setting)} | ${variable} | ${shownFlag(setting)} | ${setting.doc} |`;
  });
  return [
    '| Setting | Default | Variable | Flag | Meaning |',
    '|---|---|---|---|---|',
    ...rows,
    '| config | none | `SLIPWAY_CONFIG` | `--config` | The configuration file below. |',
  ].join('\n');
}

/** `markdown` with its settings table (between the markers) replaced by the current one. */
export function withSettingsTable(markdown: string): string {
  const start = markdown.indexOf(SETTINGS_TABLE_START);
  const end = markdown.indexOf(SETTINGS_TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`the settings table's markers are missing (${SETTINGS_TABLE_START} … ${SETTINGS_TABLE_END})`);
  return `${markdown.slice(0, start + SETTINGS_TABLE_START.length)}\n${settingsTableMarkdown()}\n${markdown.slice(end)}`;
}
