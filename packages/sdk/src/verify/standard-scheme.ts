import { fromBase64 } from './encoding.js';
import { WEBHOOK_ID_HEADER, WEBHOOK_SIGNATURE_HEADER, WEBHOOK_TIMESTAMP_HEADER, type HeadersInput } from './headers.js';
import { fail, readHeaderTriple, type ReadDelivery } from './read-delivery.js';
import { hmacSha256, timingSafeEqual } from './signature.js';
import {
  ED25519_SIGNATURE_BYTES,
  HMAC_SHA256_BYTES,
  STANDARD_ED25519_SCHEME,
  STANDARD_HMAC_SCHEME,
  importEd25519PublicKey,
  standardMessage,
  standardSecretKey,
  verifyEd25519,
} from './standard-signature.js';

/**
 * svc sends one entry per live secret or key: two during a rotation's overlap. Each `v1a` entry costs one Ed25519
 * verification per public key (import and verify: 0.36 ms on Node 20, on the 2-core development machine), and a 16 KiB
 * header (Node's default limit) holds about 175 of them: the cap keeps a forged header's cost to ~6 ms per key.
 */
const MAX_ENTRIES = 16;

// A Map, not an object: an entry named `constructor,…` must find nothing.
const SIGNATURE_BYTES = new Map([
  [STANDARD_HMAC_SCHEME, HMAC_SHA256_BYTES],
  [STANDARD_ED25519_SCHEME, ED25519_SIGNATURE_BYTES],
]);

interface Entries {
  v1: Uint8Array<ArrayBuffer>[];
  v1a: Uint8Array<ArrayBuffer>[];
}

function entriesOf(header: string): Entries {
  const found: Entries = { v1: [], v1a: [] };
  // A header sent twice reaches a Fetch `Headers` joined with ", ": the comma then ends an entry. Base64 has none.
  const entries = header
    .split(/\s+/)
    .map((e) => e.replace(/,+$/, ''))
    .filter((e) => e !== '');
  if (entries.length === 0) fail('malformed_header', `${WEBHOOK_SIGNATURE_HEADER} has no entries`);
  if (entries.length > MAX_ENTRIES) {
    fail('malformed_header', `${WEBHOOK_SIGNATURE_HEADER} has more than ${MAX_ENTRIES} entries`);
  }
  for (const entry of entries) {
    const comma = entry.indexOf(',');
    if (comma <= 0) fail('malformed_header', `${WEBHOOK_SIGNATURE_HEADER} entries must look like v1,<base64>`);
    const scheme = entry.slice(0, comma);
    const size = SIGNATURE_BYTES.get(scheme);
    // Other identifiers are skipped, as Standard Webhooks libraries do, so that a scheme added later breaks nothing.
    if (size === undefined) continue;
    const bytes = fromBase64(entry.slice(comma + 1));
    if (bytes?.length !== size) {
      fail('malformed_header', `${WEBHOOK_SIGNATURE_HEADER} ${scheme} entry is not the base64 of ${size} bytes`);
    }
    (scheme === STANDARD_HMAC_SCHEME ? found.v1 : found.v1a).push(bytes);
  }
  return found;
}

/** Standard Webhooks v1 (SPEC §13): `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<b64> v1a,<b64> …`. */
export function readStandardHeaders(headers: HeadersInput): ReadDelivery {
  const names = { id: WEBHOOK_ID_HEADER, timestamp: WEBHOOK_TIMESTAMP_HEADER, signature: WEBHOOK_SIGNATURE_HEADER };
  const { deliveryId, timestamp, signature } = readHeaderTriple(headers, names);
  const { v1, v1a } = entriesOf(signature);

  return {
    deliveryId,
    timestamp,
    idHeader: WEBHOOK_ID_HEADER,
    timestampHeader: WEBHOOK_TIMESTAMP_HEADER,
    async authenticate({ secrets, publicKeys }, body) {
      const message = standardMessage(deliveryId, timestamp, body);
      let matched = false;
      const hmacKeys = v1.length === 0 ? [] : secrets.map(standardSecretKey).filter((k) => k !== null);
      for (const key of hmacKeys) {
        const expected = await hmacSha256(key, message);
        // No early exit: the time taken does not tell which entry or secret matched.
        for (const signature of v1) matched = timingSafeEqual(expected, signature) || matched;
      }
      // Public keys hide nothing, so Ed25519 needs no constant time; every pair is still tried, bounded by MAX_ENTRIES.
      for (const raw of v1a.length === 0 ? [] : publicKeys) {
        const key = await importEd25519PublicKey(raw);
        for (const signature of v1a) matched = (await verifyEd25519(key, signature, message)) || matched;
      }
      if (matched) return;
      const hints: string[] = [];
      if (v1.length > 0 && hmacKeys.length === 0) hints.push('no secret given is whsec_ followed by base64');
      if (v1a.length > 0 && publicKeys.length === 0) hints.push('it is signed with ed25519 (v1a): pass publicKey');
      if (v1.length + v1a.length === 0) hints.push(`${WEBHOOK_SIGNATURE_HEADER} has no v1 or v1a entry`);
      fail('signature_mismatch', ['no v1 or v1a signature matches', ...hints].join('; '));
    },
  };
}
