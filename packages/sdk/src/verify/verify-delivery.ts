import { parseEnvelope, type WebhookEnvelope } from './envelope.js';
import { WebhookVerificationError } from './errors.js';
import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, headerValues, type HeadersInput } from './headers.js';
import { SIGNATURE_SCHEME, bodyBytes, fromHex, hmac, timingSafeEqual, type RawBody } from './signature.js';

/** svc signs with the same default; `limits.webhookSignatureToleranceSeconds` in its capabilities. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

export interface VerifyDeliveryOptions {
  /** The signing secret exactly as svc showed it (`whsec_…`). */
  secret?: string;
  /** Several secrets, e.g. both sides of a rotation; a delivery is accepted if any of them signed it. */
  secrets?: readonly string[];
  headers: HeadersInput;
  /** The body exactly as received, before any JSON parsing. */
  rawBody: RawBody;
  /** Largest accepted distance between `Svc-Timestamp` and now, in either direction. */
  toleranceSeconds?: number;
  /** The current time (a Date or milliseconds); defaults to the clock. */
  now?: Date | number;
}

const DELIVERY_ID = /^del_[A-Za-z0-9_-]{1,128}$/;
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const UNIX_SECONDS = /^[0-9]{1,15}$/;

function fail(code: WebhookVerificationError['code'], message: string): never {
  throw new WebhookVerificationError(code, message);
}

function single(values: string[], name: string): string {
  if (new Set(values).size > 1) fail('malformed_header', `${name} header is sent more than once`);
  return values[0]!;
}

function secretList(options: VerifyDeliveryOptions): string[] {
  const secrets = [...(options.secret !== undefined ? [options.secret] : []), ...(options.secrets ?? [])];
  if (secrets.length === 0) throw new TypeError('verifyDelivery needs `secret` or `secrets`');
  for (const s of secrets) {
    if (typeof s !== 'string' || s === '') throw new TypeError('a webhook secret must be a non-empty string');
  }
  return secrets;
}

/** The `v1` signatures of the header; entries of other schemes are skipped so svc can add schemes later. */
function v1Signatures(header: string): Uint8Array[] {
  const signatures: Uint8Array[] = [];
  // Commas too: a header sent twice reaches a Fetch `Headers` joined with ", ".
  const entries = header.split(/[\s,]+/).filter((e) => e !== '');
  if (entries.length === 0) fail('malformed_header', `${SIGNATURE_HEADER} has no entries`);
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    if (eq <= 0) fail('malformed_header', `${SIGNATURE_HEADER} entries must look like v1=<hex>`);
    if (entry.slice(0, eq) !== SIGNATURE_SCHEME) continue;
    const hex = entry.slice(eq + 1);
    if (!HEX_SHA256.test(hex)) fail('malformed_header', `${SIGNATURE_HEADER} v1 entry is not 64 hex digits`);
    signatures.push(fromHex(hex));
  }
  return signatures;
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
  const secrets = secretList(options);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) throw new TypeError('toleranceSeconds must be a number >= 0');
  const body = bodyBytes(options.rawBody);

  const present = [DELIVERY_HEADER, TIMESTAMP_HEADER, SIGNATURE_HEADER].map((name) => {
    const values = headerValues(options.headers, name);
    if (values.length === 0) fail('missing_header', `${name} header is missing`);
    return values;
  });
  const deliveryId = single(present[0]!, DELIVERY_HEADER);
  const timestamp = single(present[1]!, TIMESTAMP_HEADER);
  if (!DELIVERY_ID.test(deliveryId)) fail('malformed_header', `${DELIVERY_HEADER} is not a delivery id`);
  if (!UNIX_SECONDS.test(timestamp)) fail('malformed_header', `${TIMESTAMP_HEADER} is not Unix seconds`);
  const signatures = v1Signatures(present[2]!.join(' '));

  if (Math.abs(nowSeconds(options.now) - Number(timestamp)) > tolerance) {
    fail('timestamp_stale', `${TIMESTAMP_HEADER} is more than ${tolerance} s away from now`);
  }

  let matched = false;
  for (const secret of secrets) {
    const expected = await hmac(secret, timestamp, body);
    // No early exit: the time taken does not tell which entry or secret matched.
    for (const signature of signatures) matched = timingSafeEqual(expected, signature) || matched;
  }
  if (!matched) fail('signature_mismatch', 'no v1 signature matches the secret');

  const envelope = parseEnvelope(body);
  // The header is not signed, the envelope id is: a different header means someone changed it.
  if (envelope.id !== deliveryId) fail('id_mismatch', `${DELIVERY_HEADER} differs from the envelope id`);
  return envelope;
}
