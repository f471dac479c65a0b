/**
 * `slipway submissions list|show`: reads the submission journal of a data directory (safe
 * while the server runs).
 */
import { resolveConfig } from '../config/config';
import {
  TRANSACTION_STATES as STATES,
  type JournalEntry,
  type JournalTransaction,
  type SendEvidence,
  openJournal,
  type TransactionState,
} from '../stores/journal';
import { parseOptions } from './parse-options';

export async function runSubmissions(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  const { values, positionals } = parseOptions(`submissions ${action ?? ''}`.trim(), rest, {
    key: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    config: { type: 'string' },
  });
  const config = resolveConfig({ dataDir: values['data-dir'], config: values.config });
  const journal = await openJournal(config, { reader: true });
  try {
    let entries: JournalEntry[];
    if (action === 'list') {
      const state = values.status as TransactionState | undefined;
      if (state !== undefined && !STATES.includes(state)) throw new Error(`submissions list --status takes one of ${STATES.join(', ')}`);
      const limit = values.limit === undefined ? 100 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1) throw new Error('submissions list --limit takes a positive integer');
      entries = await journal.list({ keyId: values.key, state, limit });
    } else if (action === 'show') {
      const id = positionals[0];
      if (id === undefined) throw new Error('usage: submissions show SIGNATURE|BUNDLE_ID');
      entries = await journal.find(id);
      if (entries.length === 0) throw new Error(`no submission holds ${id}`);
    } else {
      throw new Error('submissions: say list or show (see bin/slipway help)');
    }
    process.stdout.write(values.json ? JSON.stringify(entries.map(toView)) + '\n' : entries.map(format).join(''));
    return 0;
  } finally {
    await journal.close();
  }
}

/** An entry as people and scripts see it: the wire bytes are left out. */
function toView(entry: JournalEntry) {
  return {
    ...entry,
    createdAt: new Date(entry.createdAt).toISOString(),
    updatedAt: new Date(entry.updatedAt).toISOString(),
    transactions: entry.transactions.map(({ wire: _wire, ...tx }) => tx),
  };
}

function format(entry: JournalEntry): string {
  const head = `#${entry.seq} ${entry.kind}${entry.bundleId ? ` ${entry.bundleId}` : ''} key=${entry.keyId}${entry.antiMev ? ' anti_mev' : ''} via ${entry.routes.join(',') || '-'} at ${new Date(entry.createdAt).toISOString()}\n`;
  const line = (tx: JournalTransaction) =>
    `  ${tx.signature}  ${tx.state}${tx.slot !== null ? ` slot ${tx.slot}` : ''}  sends ${entry.antiMev ? tx.sends.length : tx.attempts + 1}${tx.reasonCode ? `  ${tx.reasonCode}` : ''}${tx.reason ? ` (${tx.reason})` : ''}\n`;
  return head + entry.transactions.map((tx) => line(tx) + tx.sends.map((send, i) => formatSend(send, i)).join('')).join('');
}

/** One send of a protected transaction: where and when it went, and what it waited for. */
export function formatSend(send: SendEvidence, index: number): string {
  const time = new Date(send.at).toISOString();
  const what = send.attempt === 0 ? 'sent' : `rebroadcast ${send.attempt}`;
  const window =
    send.slot === null
      ? 'leader schedule unknown'
      : `slot ${send.slot}, window ${send.slot}–${send.slot + send.windowSlots - 1} led by ${send.leaders.join(', ')}`;
  const gating =
    send.gating === 'policy' ? 'every leader trusted by the validator policy' : 'no validator policy configured: no leader gating applied';
  const held = send.heldMs > 0 && send.heldReason !== null ? `; held ${send.heldMs} ms because ${send.heldReason}` : '';
  return `    ${index + 1}. ${what} at ${time} via ${send.route.join(',')}: ${window}; ${gating}${held}\n`;
}
