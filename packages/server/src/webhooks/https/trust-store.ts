import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { ConfigError } from '../../config/schema.js';

/**
 * The certificates of SVC_WEBHOOK_CA_FILE, checked at start. Node's TLS takes a file holding no certificate (a key, a
 * DER file, a wrong path's HTML) without a word and trusts nothing more: svc started, and every delivery to a receiver
 * behind the private authority failed its handshake, one retry schedule after another.
 */
export function extraCertificates(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError('SVC_WEBHOOK_CA_FILE', `cannot read ${file}: ${(err as Error).message}`);
  }
  const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (pems.length === 0) throw new ConfigError('SVC_WEBHOOK_CA_FILE', `${file} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  pems.forEach((pem, i) => {
    try {
      new X509Certificate(pem);
    } catch (err) {
      throw new ConfigError('SVC_WEBHOOK_CA_FILE', `certificate ${i + 1} of ${pems.length} in ${file} cannot be read: ${(err as Error).message}`);
    }
  });
  return pems;
}

/**
 * One TLS context for every delivery connection when extra certificate authorities are given (SVC_WEBHOOK_CA_FILE):
 * parsing ~150 root certificates per handshake would cost more than the request. Undefined: Node's defaults.
 */
export function deliverySecureContext(extraCa: readonly string[]): tls.SecureContext | undefined {
  return extraCa.length > 0 ? tls.createSecureContext({ ca: [...defaultTrust(), ...extraCa] }) : undefined;
}

/**
 * The default trust store, extra certificates included. Node drops NODE_EXTRA_CA_CERTS as soon as `ca` is given
 * (seen on Node 20.20), so it has to be rebuilt by hand; Node ≥ 22.15 can list it itself.
 */
function defaultTrust(): string[] {
  const list = (tls as { getCACertificates?: (type: 'default') => string[] }).getCACertificates;
  if (typeof list === 'function') return list('default');
  // The one env read outside config: Node's own variable, which Node itself reads the same way.
  const file = process.env.NODE_EXTRA_CA_CERTS;
  let extra: string[] = [];
  if (file) {
    try {
      extra = readFileSync(file, 'utf8').match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    } catch {
      // Node itself only warns about an unreadable file and carries on with the bundled roots.
    }
  }
  return [...tls.rootCertificates, ...extra];
}
