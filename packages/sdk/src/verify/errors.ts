export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_stale'
  | 'signature_mismatch'
  | 'id_mismatch'
  | 'malformed_body';

/**
 * Why a delivery was refused. Branch on `code`, never on `message`.
 * `status` is the answer a receiver should send: 401 when the request could not be authenticated,
 * 400 when it was authentic but unusable (svc retries either way, so neither is silently dropped).
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  get status(): 400 | 401 {
    return this.code === 'malformed_body' || this.code === 'id_mismatch' ? 400 : 401;
  }
}
