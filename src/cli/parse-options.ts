import { parseArgs, type ParseArgsConfig } from 'node:util';

/** node:util's parseArgs, with errors turned into messages that name the command. */
export function parseOptions<T extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  args: string[],
  options: T,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new Error(`${command}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}
