/** Runs `bin/slipway` as a real child process, the way a user does. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { after } from 'node:test';

export const SLIPWAY = path.resolve(__dirname, '../../../bin/slipway');

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** The first key printed on first start, if one was. */
  readonly initialKey: string | undefined;
  readonly stdout: string[];
  readonly stderr: string[];
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/**
 * Servers still running when a test file ends. A test that fails before stopping its server
 * would otherwise leave the process running, and the test file (whose event loop the child's
 * pipes keep alive) would never end.
 */
const running = new Set<ChildProcess>();
// Only inside a test file run by `node --test` (the bench imports this module too).
if (process.env.NODE_TEST_CONTEXT !== undefined) after(() => running.forEach((child) => child.kill('SIGKILL')));

export async function startServer(dataDir: string, env: Record<string, string> = {}, args: string[] = []): Promise<ServerProcess> {
  const child = spawn(SLIPWAY, ['serve', '--port', '0', '--data-dir', dataDir, '--slot-ms', '50', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = readline.createInterface({ input: child.stdout! });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start: ${stderr.join('')}`));
    }, 30_000);
    void exited.then((code) => reject(new Error(`server exited with ${code}: ${stderr.join('')}`)));
    lines.on('line', (line) => {
      stdout.push(line);
      const match = /listening on (http:\/\/\S+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        const initialKey = stdout.map((l) => l.trim()).find((l) => l.startsWith('slw_'));
        resolve({ child, url: match[1]!, initialKey, stdout, stderr, exited });
      }
    });
  });
}

/** Runs a CLI command to completion. */
export function runCli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(SLIPWAY, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
