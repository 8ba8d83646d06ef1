export { WebhookVerificationError, type WebhookVerificationErrorCode } from './errors.js';
export {
  DELIVERY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  type HeaderRecord,
  type HeadersInput,
  type HeadersLike,
} from './headers.js';
export { SIGNATURE_SCHEME, sign, type RawBody, type SignOptions } from './signature.js';
export { signedHeaders, type SignatureScheme, type SignedHeadersOptions } from './signed-headers.js';
export {
  generateSecret,
  generateSigningKeyPair,
  signStandard,
  type StandardSignOptions,
} from './standard-signature.js';
export type {
  RecordEventPayload,
  RecordUpdatedPayload,
  SvcRecord,
  TestEventPayload,
  WebhookEnvelope,
  WebhookTopic,
} from './envelope.js';
export { DEFAULT_TOLERANCE_SECONDS, verifyDelivery, type VerifyDeliveryOptions } from './verify-delivery.js';
export type { ClaimOutcome, DedupeStore } from './dedupe-store.js';
export { MemoryDedupeStore, type MemoryDedupeStoreOptions } from './memory-store.js';
export {
  DEFAULT_DEDUPE_TTL_SECONDS,
  DEFAULT_IN_PROGRESS_TTL_SECONDS,
  handleDelivery,
  type HandleDeliveryOptions,
  type HandleDeliveryResult,
} from './handle-delivery.js';
export {
  brokerDelivery,
  verifyBrokerMessage,
  type BrokerHeaders,
  type NatsHeadersLike,
  type VerifyBrokerMessageOptions,
} from './broker-message.js';
