/**
 * Private PostgreSQL and Redis servers for tests that stop and restart them: on spare ports,
 * in temporary directories, never the shared services other tests use. PostgreSQL refuses
 * to run as root, so it runs as the `postgres` user when the tests run as root.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export async function sparePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() - started > timeoutMs) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface PrivateService {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateService> {
  const port = await sparePort();
  let child: ChildProcess | undefined;
  const service: PrivateService = {
    url: `redis://127.0.0.1:${port}/0`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await waitForPort(port);
    },
    async stop() {
      if (child === undefined) return;
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      child = undefined;
    },
    async destroy() {
      await service.stop();
    },
  };
  await service.start();
  return service;
}

function pgBin(name: string): string {
  const versions = fs.readdirSync('/usr/lib/postgresql').sort();
  return path.join('/usr/lib/postgresql', versions[versions.length - 1]!, 'bin', name);
}

/** Runs a PostgreSQL tool as the postgres user (as root) or as ourselves. */
function asPostgres(command: string, args: string[]): void {
  const root = process.getuid?.() === 0;
  execFileSync(root ? 'runuser' : command, root ? ['-u', 'postgres', '--', command, ...args] : args, { stdio: 'ignore' });
}

export async function startPrivatePostgres(): Promise<PrivateService> {
  const port = await sparePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  asPostgres(pgBin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const service: PrivateService = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      asPostgres(pgBin('pg_ctl'), [
        '-D',
        data,
        '-l',
        path.join(dir, 'log'),
        '-o',
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
        '-w',
        'start',
      ]);
      await waitForPort(port);
    },
    async stop() {
      try {
        asPostgres(pgBin('pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // Not running.
      }
    },
    async destroy() {
      await service.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}
