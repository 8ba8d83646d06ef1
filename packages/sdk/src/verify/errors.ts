export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_stale'
  | 'signature_mismatch'
  | 'id_mismatch'
  | 'malformed_body'
  | 'delivery_in_progress';

const STATUS: Record<WebhookVerificationErrorCode, 400 | 401 | 409> = {
  missing_header: 401,
  malformed_header: 401,
  timestamp_stale: 401,
  signature_mismatch: 401,
  id_mismatch: 400,
  malformed_body: 400,
  delivery_in_progress: 409,
};

/**
 * Why a delivery was refused. Branch on `code`, never on `message`.
 * `status` is the answer a receiver should send: 401 when the request could not be authenticated, 400 when it was
 * authentic but unusable, 409 when another run is still processing the same delivery (svc retries each of them, so
 * none is silently dropped). `delivery_in_progress` is one of these errors, not a result, so that a receiver that
 * answers `error.status` answers it correctly without knowing about it.
 */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.code = code;
  }

  get status(): 400 | 401 | 409 {
    return STATUS[this.code];
  }
}
