/**
 * bench/one-send-files.ts, which docs/ARCHITECTURE.md quotes: it runs, and what it lists is
 * the path a sendTransaction takes (the socket's state machine, the pipeline, the journal's
 * log, the upstream), not what happened to run nearby.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';

it('one-send-files lists the files one sendTransaction runs, from the socket to the upstream and the journal', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [path.resolve(__dirname, '../../bench/one-send-files.js')], {
    timeout: 60_000,
  });
  const count = /ran functions of (\d+) files of src\//.exec(stdout);
  assert.ok(count !== null, stdout);
  for (const file of [
    'lean-connection.ts',
    'submission-service.ts',
    'validate-transaction.ts',
    'submission-pipeline.ts',
    'embedded-ledger.ts',
    'journal-log.ts',
  ])
    assert.match(stdout, new RegExp(`\\b${file.replace('.', '\\.')}\\b`), `${file} is on a sendTransaction's path`);
  // Started, stopped and never on a send's path: their files have no function that runs per request.
  for (const file of ['app.ts', 'settings.ts', 'open-store.ts'])
    assert.doesNotMatch(stdout, new RegExp(`\\b${file.replace('.', '\\.')}\\b`));
  assert.ok(Number(count[1]) > 30 && Number(count[1]) < 120, stdout);
});
