/** `slipway/client`: the typed client for Slipway's HTTP interface. */
export {
  createSlipwayClient,
  type BundleResult,
  type LandingEstimate,
  type LandingEstimateRequest,
  type LandingReport,
  type SendOptions,
  type SlipwayClient,
  type SlipwayClientOptions,
  type SubmissionStatus,
  type SubmitOptions,
} from './slipway-client';
export { SlipwayClientError } from './slipway-client-error';
export type { SerializableTransaction, TransactionInput } from './transaction-input';
