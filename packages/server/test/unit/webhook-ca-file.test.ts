import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { deliveryClientOptions } from '../../src/runtime.js';
import { createDeliveryResolver } from '../../src/webhooks/dns-resolver.js';
import { makeCertificate } from '../helpers/https-receiver.js';

/**
 * SVC_WEBHOOK_CA_FILE is checked when the worker starts: a file holding no certificate was taken by Node's TLS without
 * a word (it trusts nothing more), so svc started and every delivery to a receiver behind the private authority failed.
 */
describe('SVC_WEBHOOK_CA_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ca-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const resolver = createDeliveryResolver({ timeoutMs: 1000 });
  const optionsWith = (file: string) => deliveryClientOptions(loadConfig({ SVC_DATABASE_URL: 'sqlite::memory:', SVC_WEBHOOK_CA_FILE: file }), resolver);
  const fileOf = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it('takes every certificate of a PEM file', async () => {
    const [a, b] = [await makeCertificate(['a.example']), await makeCertificate(['b.example'])];
    expect(optionsWith(fileOf('two.pem', `# our authorities\n${a.cert}\n${b.cert}`)).ca).toEqual([a.cert.trim(), b.cert.trim()]);
  });

  it('refuses a file with no PEM certificate, or one that cannot be read, naming the setting and the file', async () => {
    const key = fileOf('key.pem', (await makeCertificate(['c.example'])).key);
    expect(() => optionsWith(key)).toThrow(`SVC_WEBHOOK_CA_FILE: ${key} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    const broken = fileOf('broken.pem', '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');
    expect(() => optionsWith(broken)).toThrow(`SVC_WEBHOOK_CA_FILE: certificate 1 of 1 in ${broken} cannot be read`);
    expect(() => optionsWith(join(dir, 'missing.pem'))).toThrow(`SVC_WEBHOOK_CA_FILE: cannot read ${join(dir, 'missing.pem')}: ENOENT`);
  });
});
