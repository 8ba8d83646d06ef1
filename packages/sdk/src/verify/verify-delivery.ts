import { parseEnvelope, type WebhookEnvelope } from './envelope.js';
import {
  DELIVERY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
  headerValues,
  type HeadersInput,
} from './headers.js';
import { fail, type ReadDelivery, type SigningKeys } from './read-delivery.js';
import { bodyBytes, type RawBody } from './signature.js';
import { readStandardHeaders } from './standard-scheme.js';
import { publicKeyBytes } from './standard-signature.js';
import { readSvcHeaders } from './svc-scheme.js';

/** svc signs with the same default; `limits.webhookSignatureToleranceSeconds` in its capabilities. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface VerifyDeliveryOptions {
  /** The signing secret exactly as svc showed it (`whsec_…`). */
  secret?: string;
  /** Several secrets, e.g. both sides of a rotation; a delivery is accepted if any of them signed it. */
  secrets?: readonly string[];
  /** An ed25519 target's public key exactly as svc shows it (`whpk_…`): checks `v1a` Standard Webhooks entries. */
  publicKey?: string;
  /** Several public keys, e.g. both sides of a rotation. */
  publicKeys?: readonly string[];
  headers: HeadersInput;
  /** The body exactly as received, before any JSON parsing. */
  rawBody: RawBody;
  /** Largest accepted distance between the delivery's timestamp and now, in either direction. */
  toleranceSeconds?: number;
  /** The current time (a Date or milliseconds); defaults to the clock. */
  now?: Date | number;
}

function signingKeys(options: VerifyDeliveryOptions): SigningKeys {
  const secrets = [...(options.secret !== undefined ? [options.secret] : []), ...(options.secrets ?? [])];
  const publicKeys = [...(options.publicKey !== undefined ? [options.publicKey] : []), ...(options.publicKeys ?? [])];
  if (secrets.length + publicKeys.length === 0) {
    throw new TypeError('verifyDelivery needs `secret` or `secrets` (or, for an ed25519 target, `publicKey`)');
  }
  for (const s of secrets) {
    if (typeof s !== 'string' || s === '') throw new TypeError('a webhook secret must be a non-empty string');
  }
  return { secrets, publicKeys: publicKeys.map(publicKeyBytes) };
}

function anyPresent(headers: HeadersInput, names: string[]): boolean {
  return names.some((name) => headerValues(headers, name).length > 0);
}

/**
 * Which scheme the delivery is verified in. Any `Svc-*` header means svc's own, even when `webhook-*` headers come
 * too (a target's `signatureScheme` `both`): a receiver that verified svc deliveries keeps doing exactly that, with
 * the same secrets, when its target starts sending both. Only `webhook-*` headers: Standard Webhooks.
 */
function readHeaders(headers: HeadersInput): ReadDelivery {
  if (anyPresent(headers, [DELIVERY_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER])) return readSvcHeaders(headers);
  if (anyPresent(headers, [WEBHOOK_ID_HEADER, WEBHOOK_TIMESTAMP_HEADER, WEBHOOK_SIGNATURE_HEADER])) {
    return readStandardHeaders(headers);
  }
  fail('missing_header', `neither ${SIGNATURE_HEADER} nor ${WEBHOOK_SIGNATURE_HEADER} headers: not a svc delivery`);
}

function nowSeconds(now: Date | number | undefined): number {
  const ms = now === undefined ? Date.now() : typeof now === 'number' ? now : now.getTime();
  if (!Number.isFinite(ms)) throw new TypeError('now must be a valid Date or a number of milliseconds');
  return Math.floor(ms / 1000);
}

/**
 * Authenticates a delivery and returns its envelope, or throws a `WebhookVerificationError`.
 * Checks run cheapest and least revealing first: headers, their format, the clock, the signature; the body is
 * parsed only once it is known to come from svc.
 */
export async function verifyDelivery(options: VerifyDeliveryOptions): Promise<WebhookEnvelope> {
  const keys = signingKeys(options);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new TypeError('toleranceSeconds must be a number >= 0');
  const body = bodyBytes(options.rawBody);

  const delivery = readHeaders(options.headers);
  if (Math.abs(nowSeconds(options.now) - Number(delivery.timestamp)) > tolerance) {
    fail('timestamp_stale', `${delivery.timestampHeader} is more than ${tolerance} s away from now`);
  }
  await delivery.authenticate(keys, body);

  const envelope = parseEnvelope(body);
  // Svc-Delivery is not signed, the envelope id is: a different header means someone changed it. (webhook-id is
  // signed, so there a difference would be svc's own error; the envelope id stays the de-duplication key either way.)
  if (envelope.id !== delivery.deliveryId) fail('id_mismatch', `${delivery.idHeader} differs from the envelope id`);
  return envelope;
}
