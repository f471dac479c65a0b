import crypto from 'node:crypto';

/**
 * The bundle ID exactly as Jito's block engine derives it: lowercase hex SHA-256 over the
 * base58 first signatures of the bundle's transactions, in order, joined by ",".
 */
export function computeBundleId(signatures: readonly string[]): string {
  return crypto.createHash('sha256').update(signatures.join(','), 'utf8').digest('hex');
}
