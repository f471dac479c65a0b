/** Starts the servers the benchmark measures, each in its own process, and waits until they listen. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const ROOT = path.resolve(__dirname, '../..');

export interface ServerProcess {
  readonly url: string;
  readonly key: string | undefined;
  readonly pid: number;
  stop(): Promise<void>;
}

function waitForListening(child: ChildProcess, what: string): Promise<{ url: string; key: string | undefined }> {
  return new Promise((resolve, reject) => {
    let key: string | undefined;
    const errors: string[] = [];
    child.stderr?.on('data', (chunk: Buffer) => errors.push(chunk.toString()));
    child.on('exit', (code) => reject(new Error(`${what} exited with ${code}: ${errors.join('')}`)));
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const trimmed = line.trim();
      if (trimmed.startsWith('slw_')) key = trimmed;
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) resolve({ url: match[1]!, key });
    });
  });
}

async function start(command: string, args: string[], what: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, env: { ...process.env, ...env } });
  const { url, key } = await waitForListening(child, what);
  return {
    url,
    key,
    pid: child.pid!,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export const startCeiling = () => start(process.execPath, [path.join(ROOT, 'dist/bench/ceiling-server.js')], 'the ceiling server');

/** `cpus` (taskset's list, e.g. "1") pins the gateway to those cores, leaving the others to the load generator. */
export const startSlipway = (dataDir: string, extra: string[], env: Record<string, string> = {}, cpus?: string) => {
  const command = [path.join(ROOT, 'bin/slipway'), 'serve', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn', ...extra];
  return cpus === undefined ? start(command[0]!, command.slice(1), 'Slipway', env) : start('taskset', ['-c', cpus, ...command], 'Slipway', env);
};
