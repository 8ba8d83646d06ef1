import { WebhookVerificationError } from './errors.js';
import { headerValues, type HeadersInput } from './headers.js';

/** What a receiver verifies with: secrets as shown (`whsec_…`) and ed25519 public keys, already decoded. */
export interface SigningKeys {
  secrets: readonly string[];
  publicKeys: readonly Uint8Array<ArrayBuffer>[];
}

/** A delivery's headers, read and checked for form, in either of svc's signature schemes. */
export interface ReadDelivery {
  deliveryId: string;
  timestamp: string;
  /** The header names, for messages. */
  idHeader: string;
  timestampHeader: string;
  /** Resolves when an entry of the signature header matches one of the keys; else throws `signature_mismatch`. */
  authenticate(keys: SigningKeys, body: Uint8Array): Promise<void>;
}

const DELIVERY_ID = /^del_[A-Za-z0-9_-]{1,128}$/;
const UNIX_SECONDS = /^[0-9]{1,15}$/;

export function fail(code: WebhookVerificationError['code'], message: string): never {
  throw new WebhookVerificationError(code, message);
}

function single(values: string[], name: string): string {
  if (new Set(values).size > 1) fail('malformed_header', `${name} header is sent more than once`);
  return values[0]!;
}

/**
 * A scheme's three headers: the presence of all three is checked first, then the form of the id and the timestamp.
 * The signature header's values come back joined by a space, for the scheme to parse.
 */
export function readHeaderTriple(
  headers: HeadersInput,
  names: { id: string; timestamp: string; signature: string },
): { deliveryId: string; timestamp: string; signature: string } {
  const [ids, timestamps, signatures] = [names.id, names.timestamp, names.signature].map((name) => {
    const values = headerValues(headers, name);
    if (values.length === 0) fail('missing_header', `${name} header is missing`);
    return values;
  });
  const deliveryId = single(ids!, names.id);
  const timestamp = single(timestamps!, names.timestamp);
  if (!DELIVERY_ID.test(deliveryId)) fail('malformed_header', `${names.id} is not a delivery id`);
  if (!UNIX_SECONDS.test(timestamp)) fail('malformed_header', `${names.timestamp} is not Unix seconds`);
  return { deliveryId, timestamp, signature: signatures!.join(' ') };
}
