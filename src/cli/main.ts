/**
 * `bin/slipway`: the command line. Each subcommand lives in its own file.
 */
import { flagUsage } from '../config/flags';
import { runApiDocs } from './api-docs';
import { runDemo } from './demo';
import { runKeys } from './keys';
import { runLedger } from './ledger';
import { runReport } from './report';
import { runSend } from './send';
import { runServe } from './serve';
import { runStatus } from './status';
import { runSubmissions } from './submissions';

/** Flags joined into lines of at most 100 characters, the later ones indented. */
function wrapped(flags: string[], indent: number): string {
  const lines: string[] = [];
  for (const flag of flags) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last]!.length + flag.length + 1 <= 100 - indent) lines[last] += ` ${flag}`;
    else lines.push(flag);
  }
  return lines.join(`\n${' '.repeat(indent)}`);
}

const USAGE = `Usage: slipway <command> [options]

Commands:
  serve ${wrapped(['[--config FILE]', ...flagUsage('serve')], 8)}
                                                  start the gateway (default upstream: the embedded ledger;
                                                  every setting and its variable: docs/CONFIG.md)
  keys create --name NAME [--bundle] [--tps N] [--bundles-per-second N] [--reads-per-second N] [--json]
                                                  create an API key (printed once), with its rate limits
  keys list [--json]                              list API keys (never the keys themselves)
  keys revoke ID                                  revoke a key
  keys set ID [--bundle on|off] [--tps N|off] [--bundles-per-second N|off] [--reads-per-second N|off]
                                                  allow or forbid sendBundle, set or remove rate limits
  submissions list [--key ID] [--status S] [--limit N] [--json]
                                                  the newest submissions in the journal, with each transaction's state
  submissions show SIGNATURE|BUNDLE_ID [--json]   one submission's lifecycle (and, if protected, each send's evidence)
  report [--key ID] [--since DURATION] [--json]   how submissions did (landed %, counts, refusals by reason, time to land
                                                  p50/p99 in ms and slots), per key and for all keys, over the last
                                                  DURATION (15m, 24h, 7d; default 24h): the journal, or the cluster's
  status [--url URL] [--token T] [--json]        a running gateway's figures (from its /metrics and /health)
  send [--url URL] [--key KEY] [--batch | --bundle] [--anti-mev] [--json] [--timeout-s S]
       [--fee auto|N --keypair FILE [--land-within K] [--probability P]] FILE...
                                                  send signed transactions from files (raw bytes, or Base64 one
                                                  per line), wait until each is final, print each outcome
                                                  (exit 1 unless all landed; the key may be in $SLIPWAY_API_KEY);
                                                  --fee auto sets the compute-unit price the gateway advises for a
                                                  chance P (default 0.9) of landing within K slots (default 8),
                                                  --fee N sets N micro-lamports a unit; either signs again with
                                                  the fee payer's keypair FILE
  api-docs [--out DIR]                            write the OpenAPI document, the JSON-RPC method table and
                                                  CONFIG.md's settings table (default: docs/)
  demo                                            run the whole job end to end on a fresh embedded ledger
  ledger ${wrapped(['[--fault MODE[:RATE]]', '[--tpu-fault MODE[:RATE][@VALIDATOR],…]', ...flagUsage('ledger')], 9)}
                                                  serve the embedded ledger as a local cluster: Solana
                                                  JSON-RPC on /, a Jito-style block engine on /api/v1/*,
                                                  a QUIC TPU per validator (docs/LEDGER.md)

Every command takes --data-dir DIR (default ./data, or $SLIPWAY_DATA_DIR).
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'serve':
      return runServe(rest);
    case 'keys':
      return runKeys(rest);
    case 'demo':
      return runDemo(rest);
    case 'ledger':
      return runLedger(rest);
    case 'submissions':
      return runSubmissions(rest);
    case 'report':
      return runReport(rest);
    case 'status':
      return runStatus(rest);
    case 'send':
      return runSend(rest);
    case 'api-docs':
      return runApiDocs(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 1 : 0;
    default:
      process.stderr.write(`slipway: unknown command "${command}"\n\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`slipway: ${error instanceof Error ? error.message : String(error)}\n`);
    // Exit now: a start-up that failed half-way may hold threads or timers open that would keep the process alive.
    process.exit(1);
  },
);
