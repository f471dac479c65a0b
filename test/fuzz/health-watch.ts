/**
 * Asks the gateway's `GET /health` every INTERVAL_MS during a fuzz run, over a connection
 * of its own, from a worker thread: the fuzzer's own thread is busy drawing inputs and
 * reading answers, and its lateness must not pass for the gateway's. A check that gets no
 * 200 within TIMEOUT_MS is a failure (the gateway hangs, or sheds its health check).
 */
import http from 'node:http';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const INTERVAL_MS = 500;
const TIMEOUT_MS = 2_000;

export interface HealthCheck {
  readonly at: number;
  readonly ms: number;
  /** Why it failed; undefined when it answered 200 in time. */
  readonly problem?: string;
}

export interface HealthWatch {
  /** Points the checks at a restarted gateway. */
  retarget(url: string): void;
  /** Stops and returns every check made. */
  stop(): Promise<HealthCheck[]>;
}

export function watchHealth(url: string): HealthWatch {
  const worker = new Worker(__filename, { workerData: { healthWatch: true, url } });
  const checks: HealthCheck[] = [];
  worker.on('message', (check: HealthCheck) => checks.push(check));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    retarget: (next) => worker.postMessage({ url: next }),
    async stop() {
      worker.postMessage({ stop: true });
      await exited;
      return checks;
    },
  };
}

/** One check: GET /health on `agent`'s single connection. */
function check(url: string, agent: http.Agent): Promise<HealthCheck> {
  const at = Date.now();
  return new Promise((resolve) => {
    const done = (problem?: string) => resolve({ at, ms: Date.now() - at, ...(problem === undefined ? {} : { problem }) });
    const request = http.get(`${url}/health`, { agent, timeout: TIMEOUT_MS }, (response) => {
      response.resume();
      response.on('end', () => done(response.statusCode === 200 ? undefined : `GET /health answered ${response.statusCode}`));
    });
    request.on('timeout', () => request.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    request.on('error', (error) => done(`GET /health: ${error.message}`));
  });
}

if (!isMainThread && (workerData as { healthWatch?: boolean } | undefined)?.healthWatch === true) {
  let url = (workerData as { url: string }).url;
  let stopping = false;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  parentPort!.on('message', (message: { url?: string; stop?: boolean }) => {
    if (message.url !== undefined) url = message.url;
    if (message.stop === true) stopping = true;
  });
  void (async () => {
    while (!stopping) {
      const started = Date.now();
      parentPort!.postMessage(await check(url, agent));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, INTERVAL_MS - (Date.now() - started))));
    }
    agent.destroy();
    parentPort!.close();
  })();
}
