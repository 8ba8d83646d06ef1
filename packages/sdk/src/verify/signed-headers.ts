import {
  DELIVERY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  WEBHOOK_ID_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_TIMESTAMP_HEADER,
} from './headers.js';
import { sign, timestampString, type RawBody } from './signature.js';
import { signStandard } from './standard-signature.js';

/** A target's `signatureScheme`: which headers svc signs a delivery with. */
export type SignatureScheme = 'svc' | 'standard' | 'both';

export interface SignedHeadersOptions {
  /** Newest first, as svc orders them during a rotation. */
  secrets?: readonly string[];
  /** Ed25519 private keys, newest first: `v1a,` entries, with `signatureScheme: 'standard'` only (as in svc). */
  privateKeys?: readonly CryptoKey[];
  timestamp: number | string;
  rawBody: RawBody;
  deliveryId: string;
  /** Default `svc`: `Svc-*` headers; `standard`: `webhook-*` headers; `both`: all six. */
  signatureScheme?: SignatureScheme;
}

/** The headers of a delivery as svc would send them; for receivers' own tests. */
export async function signedHeaders(options: SignedHeadersOptions): Promise<Record<string, string>> {
  const { secrets = [], privateKeys = [], timestamp, rawBody, deliveryId, signatureScheme = 'svc' } = options;
  if (!['svc', 'standard', 'both'].includes(signatureScheme)) {
    throw new TypeError("signatureScheme must be 'svc', 'standard' or 'both'");
  }
  if (privateKeys.length > 0 && signatureScheme !== 'standard') {
    throw new TypeError("privateKeys sign with ed25519, which svc sends only with signatureScheme 'standard'");
  }
  const headers: Record<string, string> = { 'Content-Type': 'application/json', 'User-Agent': 'svc-webhooks/1' };
  if (signatureScheme !== 'standard') {
    const entries = await Promise.all(secrets.map((secret) => sign({ secret, timestamp, rawBody })));
    headers[DELIVERY_HEADER] = deliveryId;
    headers[TIMESTAMP_HEADER] = timestampString(timestamp);
    headers[SIGNATURE_HEADER] = entries.join(' ');
  }
  if (signatureScheme !== 'svc') {
    if (secrets.length + privateKeys.length === 0) throw new TypeError('signedHeaders needs secrets or privateKeys');
    const common = { deliveryId, timestamp, rawBody };
    const entries = await Promise.all([
      ...secrets.map((secret) => signStandard({ ...common, secret })),
      ...privateKeys.map((privateKey) => signStandard({ ...common, privateKey })),
    ]);
    headers[WEBHOOK_ID_HEADER] = deliveryId;
    headers[WEBHOOK_TIMESTAMP_HEADER] = timestampString(timestamp);
    headers[WEBHOOK_SIGNATURE_HEADER] = entries.join(' ');
  }
  return headers;
}
