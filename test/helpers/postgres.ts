/** A schema of its own in the machine's PostgreSQL for one test file, dropped afterwards. */
import crypto from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export function testSchema(): { schema: string; drop(): Promise<void> } {
  const schema = `slipway_test_${crypto.randomBytes(4).toString('hex')}`;
  return {
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}
