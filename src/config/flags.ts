/**
 * Command-line flags, derived from the settings table: a command's `parseArgs` options for
 * the settings it takes as flags, and the settings those flags give.
 */
import { SETTINGS, type Command, type SettingName } from './settings';
import type { Settings } from './config';

type FlagOptions = Record<string, { type: 'string' }>;

const flagsOf = (command: Command): [SettingName, string][] =>
  (Object.keys(SETTINGS) as SettingName[]).flatMap((name) => {
    const flag = (SETTINGS[name] as { flags?: Partial<Record<Command, string>> }).flags?.[command];
    return flag === undefined ? [] : [[name, flag.replace(/^--/, '')]];
  });

/** `parseArgs` options for the settings `command` takes as flags (each a string, parsed with its setting). */
export function settingFlags(command: Command): FlagOptions {
  return Object.fromEntries(flagsOf(command).map(([, flag]) => [flag, { type: 'string' as const }]));
}

/** The settings given by `command`'s flags, by setting name. */
export function settingsFromFlags(command: Command, values: Record<string, unknown>): Settings {
  return Object.fromEntries(flagsOf(command).map(([name, flag]) => [name, values[flag] as string | undefined]));
}

/** `[--flag VALUE]` for each of `command`'s setting flags, for its usage text. */
export function flagUsage(command: Command): string[] {
  return flagsOf(command).map(([name, flag]) => {
    const setting = SETTINGS[name];
    const value =
      setting.kind === 'integer'
        ? 'N'
        : setting.kind === 'decimal'
          ? 'X'
          : setting.kind === 'choice'
            ? setting.choices.join('|')
            : setting.kind === 'boolean'
              ? 'true|false'
              : setting.kind === 'list'
                ? 'A,B,…'
                : 'VALUE';
    return `[--${flag} ${value}]`;
  });
}
