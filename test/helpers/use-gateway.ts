/**
 * One gateway for a whole test file: started before its tests and closed after them, with a
 * @solana/web3.js connection that carries the all-permissions key.
 */
import { after, before } from 'node:test';
import type { Connection } from '@solana/web3.js';
import type { Settings } from '../../src/config';
import { startTestGateway, type TestGateway } from './gateway';
import { connect } from './solana';

export interface GatewayContext {
  readonly gw: TestGateway;
  readonly connection: Connection;
}

/** Call at the top of a test file; the context's fields are set once the file's tests run. */
export function useGateway(settings: Settings = {}): GatewayContext {
  const context = {} as { gw: TestGateway; connection: Connection };
  before(async () => {
    context.gw = await startTestGateway(settings);
    context.connection = connect(context.gw.url, context.gw.key);
  });
  after(() => context.gw.close());
  return context;
}
