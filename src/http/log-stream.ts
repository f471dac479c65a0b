/**
 * Where the gateway's log lines go: stderr (stdout carries what the CLI prints for people and
 * scripts), in blocks. A write per line cost a tenth of the throughput at info level, where
 * every submission logs a line. Lines still buffered at a kill -9 are lost; on a graceful
 * stop they are flushed.
 */
import pino from 'pino';

/** Log lines are written when this much has gathered (or at the next flush). */
const LOG_BUFFER_BYTES = 4096;
/** …and at least this often: a quiet gateway's lines must not wait for the buffer to fill. */
const LOG_FLUSH_MS = 250;

export interface LogStream {
  readonly stream: pino.DestinationStream;
  /** Stops the periodic flush and writes what is buffered. */
  close(): Promise<void>;
}

export function createLogStream(): LogStream {
  const stream = pino.destination({ dest: 2, sync: false, minLength: LOG_BUFFER_BYTES });
  const flusher = setInterval(() => stream.flush(), LOG_FLUSH_MS);
  flusher.unref();
  return {
    stream,
    close: async () => {
      clearInterval(flusher);
      await new Promise<void>((resolve) => stream.flush(() => resolve()));
    },
  };
}
