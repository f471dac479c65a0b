/**
 * `bin/slipway`: the command line. Each subcommand lives in its own file.
 */
import { runApiDocs } from './api-docs';
import { runDemo } from './demo';
import { runKeys } from './keys';
import { runLedger } from './ledger';
import { runSend } from './send';
import { runServe } from './serve';
import { runStatus } from './status';
import { runSubmissions } from './submissions';

const USAGE = `Usage: slipway <command> [options]

Commands:
  serve [--host H] [--port P] [--data-dir DIR] [--config FILE]
        [--validator-policy FILE|URL|shield:ADDRESS] [--safe-window-slots N]
                                                  start the gateway (default upstream: the embedded ledger)
  keys create --name NAME [--bundle] [--tps N] [--bundles-per-second N] [--reads-per-second N] [--json]
                                                  create an API key (printed once), with its rate limits
  keys list [--json]                              list API keys (never the keys themselves)
  keys revoke ID                                  revoke a key
  keys set ID [--bundle on|off] [--tps N|off] [--bundles-per-second N|off] [--reads-per-second N|off]
                                                  allow or forbid sendBundle, set or remove rate limits
  submissions list [--key ID] [--status S] [--limit N] [--json]
                                                  the newest submissions in the journal, with each transaction's state
  submissions show SIGNATURE|BUNDLE_ID [--json]   one submission's lifecycle (and, if protected, each send's evidence)
  status [--url URL] [--token T] [--json]        a running gateway's figures (from its /metrics and /health)
  send [--url URL] [--key KEY] [--batch | --bundle] [--anti-mev] [--json] [--timeout-s S] FILE...
                                                  send signed transactions from files (raw bytes, or Base64 one
                                                  per line), wait until each is final, print each outcome
                                                  (exit 1 unless all landed; the key may be in $SLIPWAY_API_KEY)
  api-docs [--out DIR]                            write the OpenAPI document and the JSON-RPC method table (default: docs/)
  demo                                            run the whole job end to end on a fresh embedded ledger
  ledger [--host H] [--port 8899] [--leaders ID,...] [--sandwichers ID,...]
         [--fault MODE[:RATE]]
                                                  serve the embedded ledger as a local cluster: Solana
                                                  JSON-RPC on /, a Jito-style block engine on /api/v1/*

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
    process.exitCode = 1;
  },
);
