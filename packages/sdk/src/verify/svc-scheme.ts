import { DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, type HeadersInput } from './headers.js';
import { fail, readHeaderTriple, type ReadDelivery } from './read-delivery.js';
import { SIGNATURE_SCHEME, fromHex, hmac, timingSafeEqual } from './signature.js';

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

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

/** svc's own scheme (SPEC §5): `Svc-Delivery`, `Svc-Timestamp`, `Svc-Signature: v1=<hex> …`. */
export function readSvcHeaders(headers: HeadersInput): ReadDelivery {
  const names = { id: DELIVERY_HEADER, timestamp: TIMESTAMP_HEADER, signature: SIGNATURE_HEADER };
  const { deliveryId, timestamp, signature } = readHeaderTriple(headers, names);
  const signatures = v1Signatures(signature);

  return {
    deliveryId,
    timestamp,
    idHeader: DELIVERY_HEADER,
    timestampHeader: TIMESTAMP_HEADER,
    async authenticate({ secrets }, body) {
      let matched = false;
      for (const secret of secrets) {
        const expected = await hmac(secret, timestamp, body);
        // No early exit: the time taken does not tell which entry or secret matched.
        for (const signature of signatures) matched = timingSafeEqual(expected, signature) || matched;
      }
      if (secrets.length === 0) {
        fail('signature_mismatch', `no secret to check ${SIGNATURE_HEADER} with (only public keys were given)`);
      }
      if (!matched) fail('signature_mismatch', 'no v1 signature matches the secret');
    },
  };
}
