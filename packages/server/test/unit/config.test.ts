import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig, ConfigError } from '../../src/config/load.js';
import { parseDurationList, SETTINGS } from '../../src/config/schema.js';

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      databaseUrl: 'sqlite:./data/svc.db',
      sqliteSynchronous: 'FULL',
      publicUrl: 'http://127.0.0.1:8080',
      logLevel: 'info',
      sessionIdleMinutes: 30,
      sessionMaxHours: 12,
      loginMaxFailures: 10,
      bodyMaxBytes: 1_048_576,
      jsonMaxDepth: 32,
      webhookTimeoutMs: 15_000,
      webhookLeaseSeconds: 60,
      webhookConcurrency: 64,
      webhookTargetConcurrency: 8,
      webhookPollMs: 1000,
      webhookAllowCidrs: [],
      webhookCaFile: null,
      dnsTimeoutMs: 5000,
      listMaxBytes: 4_194_304,
    });
    expect(c.webhookRetrySchedule).toEqual([0, 5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it.each([
    ['SVC_PORT', 'eighty'],
    ['SVC_PORT', '70000'],
    ['SVC_SQLITE_SYNCHRONOUS', 'OFF'],
    ['SVC_LOG_LEVEL', 'loud'],
    ['SVC_SECRET_KEY', 'abc'],
    ['SVC_WEBHOOK_RETRY_SCHEDULE', '0s,5x'],
    ['SVC_WEBHOOK_RETRY_SCHEDULE', ''],
    ['SVC_DATABASE_URL', 'mysql://x'],
    ['SVC_PUBLIC_URL', 'not a url'],
    ['SVC_WEBHOOK_TIMEOUT_MS', '-5'],
    ['SVC_DNS_TIMEOUT_MS', '99'],
    ['SVC_DNS_TIMEOUT_MS', '60001'],
    ['SVC_NOT_A_SETTING', 'x'],
    ['SVC_WEBHOOK_ALLOW_CIDRS', '10.0.0.0/33,garbage'],
    ['SVC_WEBHOOK_ALLOW_CIDRS', '127.0.0.1/8/8'],
    ['SVC_WEBHOOK_ALLOW_CIDRS', 'fe80::1%eth0'],
    ['SVC_CORS_ORIGINS', '*'],
    ['SVC_CORS_ORIGINS', 'https://app.example/path'],
    ['SVC_CORS_ORIGINS', 'ftp://files.example'],
    ['SVC_REQUEST_TIMEOUT_MS', '0'],
    ['SVC_REQUEST_TIMEOUT_MS', 'soon'],
    ['SVC_TRUST_PROXY', 'yes'],
    ['SVC_TRUST_PROXY', '10.0.0.0/99'],
    ['SVC_TRUST_PROXY', '0'],
    ['SVC_METRICS_TOKEN', 'short'],
    ['SVC_METRICS_TOKEN', 'has a space in it somewhere'],
    ['SVC_LIST_MAX_BYTES', '100'],
    ['SVC_LIST_MAX_BYTES', '4MiB'],
  ])('%s=%s stops the start with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrowError(new RegExp(`^${name}`));
  });

  it('refuses an unknown SVC_ variable (a typo), but not SVC_TOKEN, which svc listen reads', () => {
    expect(() => loadConfig({ SVC_PROT: '8080' })).toThrowError(/^SVC_PROT: unknown setting/);
    expect(loadConfig({ SVC_TOKEN: 'svc_pat_x' }).port).toBe(8080);
  });

  it('starts with the variables the SDK, the examples and the receiver guide read exported in the same shell', () => {
    // Every SVC_* name the user-facing docs and examples use is a setting or one of these.
    const clientSide = { SVC_URL: 'http://127.0.0.1:8080', SVC_ADMIN_TOKEN: 'svcadm_x', SVC_COLLECTION: 'issues', SVC_WEBHOOK_URL: 'https://hooks.example/x', SVC_WEBHOOK_SECRET: 'whsec_x', SVC_WEBHOOK_PUBLIC_KEY: 'whpk_x', SVC_FUZZ_SEED: '1', SVC_CRASH_SEED: '2' };
    expect(loadConfig(clientSide).port).toBe(8080);
    const settings = new Set(SETTINGS.map((s) => s.env));
    const root = fileURLToPath(new URL('../../../../', import.meta.url));
    const filesIn = (dir: string) => readdirSync(join(root, dir), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => `${dir}/${e.name}`);
    const files = ['README.md', 'packages/sdk/README.md', ...filesIn('docs'), ...filesIn('examples'), ...filesIn('packages/sdk/examples')];
    const named = new Set(files.flatMap((f) => readFileSync(join(root, f), 'utf8').match(/\bSVC_[A-Z0-9]+(?:_[A-Z0-9]+)*\b/g) ?? []));
    const stray = [...named].filter((v) => !settings.has(v) && !(v in clientSide) && v !== 'SVC_TOKEN' && !v.startsWith('SVC_TEST_'));
    expect(stray).toEqual([]);
  });

  it('PostgreSQL requires SVC_SECRET_KEY', () => {
    expect(() => loadConfig({ SVC_DATABASE_URL: 'postgres://localhost/svc' })).toThrowError(/SVC_SECRET_KEY/);
  });

  it('admin bootstrap variables go together', () => {
    expect(() => loadConfig({ SVC_ADMIN_EMAIL: 'a@b.c' })).toThrowError(/SVC_ADMIN/);
  });

  it('parses the allow list at start', () => {
    const { webhookAllowCidrs } = loadConfig({ SVC_WEBHOOK_ALLOW_CIDRS: ' 127.0.0.0/8 , ::1/128,10.1.2.3' });
    expect(webhookAllowCidrs.map(([addr, bits]) => `${addr.toString()}/${bits}`)).toEqual(['127.0.0.0/8', '::1/128', '10.1.2.3/32']);
    expect(() => loadConfig({ SVC_WEBHOOK_ALLOW_CIDRS: '10.0.0.0/33,garbage' })).toThrowError(/^SVC_WEBHOOK_ALLOW_CIDRS: "10.0.0.0\/33"/);
  });

  it('parses the HTTP hardening variables', () => {
    expect(loadConfig({})).toMatchObject({ corsOrigins: [], requestTimeoutMs: 30_000, trustProxy: false, metricsToken: null });
    expect(loadConfig({ SVC_CORS_ORIGINS: 'https://a.example, http://localhost:3000/' }).corsOrigins).toEqual(['https://a.example', 'http://localhost:3000']);
    expect(loadConfig({ SVC_TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ SVC_TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ SVC_TRUST_PROXY: '10.0.0.0/8, ::1, loopback' }).trustProxy).toEqual(['10.0.0.0/8', '::1', 'loopback']);
    expect(loadConfig({ SVC_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  });

  it('parses retry schedules in every unit', () => {
    expect(parseDurationList('250ms,1s,2m,3h,1d')).toEqual([250, 1000, 120_000, 10_800_000, 86_400_000]);
  });

  it('derives SVC_PUBLIC_URL from host and port', () => {
    expect(loadConfig({ SVC_HOST: '0.0.0.0', SVC_PORT: '9000' }).publicUrl).toBe('http://0.0.0.0:9000');
    expect(loadConfig({ SVC_PUBLIC_URL: 'https://svc.example.com/some/path' }).publicUrl).toBe('https://svc.example.com');
  });

  it('every setting has its row in the README configuration table: name, default and meaning as the schema has them', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../../../README.md', import.meta.url), 'utf8');
    for (const s of SETTINGS) expect(readme, s.env).toContain(`| \`${s.env}\` | \`${s.defaultText}\` | ${s.doc} |`);
  });

  it('a default is written once: the documented text is parsed, unless it names no value (unset, none, derived)', () => {
    for (const s of SETTINGS) {
      let parsed: { value: unknown } | null = null;
      try {
        parsed = { value: s.parse(s.defaultText) };
      } catch {
        parsed = null;
      }
      if (s.fallback === undefined) expect(parsed, `${s.env}: its default text must parse`).not.toBeNull();
      // A fallback is only for a default the text cannot say; one that repeats the text's value is a second copy.
      else if (parsed !== null) expect(s.fallback({ host: '127.0.0.1', port: 8080 }), s.env).not.toEqual(parsed.value);
    }
    // And the value used is the documented one.
    const defaults = loadConfig({});
    for (const s of SETTINGS.filter((x) => x.fallback === undefined)) expect(defaults[s.key], s.env).toEqual(s.parse(s.defaultText));
  });
});
