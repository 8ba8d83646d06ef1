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
      webhookAllowCidrs: '',
      webhookCaFile: null,
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
    ['SVC_NOT_A_SETTING', 'x'],
    ['SVC_LIST_MAX_BYTES', '100'],
    ['SVC_LIST_MAX_BYTES', '4MiB'],
  ])('%s=%s stops the start with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrowError(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrowError(new RegExp(`^${name}`));
  });

  it('PostgreSQL requires SVC_SECRET_KEY', () => {
    expect(() => loadConfig({ SVC_DATABASE_URL: 'postgres://localhost/svc' })).toThrowError(/SVC_SECRET_KEY/);
  });

  it('admin bootstrap variables go together', () => {
    expect(() => loadConfig({ SVC_ADMIN_EMAIL: 'a@b.c' })).toThrowError(/SVC_ADMIN/);
  });

  it('parses retry schedules in every unit', () => {
    expect(parseDurationList('250ms,1s,2m,3h,1d')).toEqual([250, 1000, 120_000, 10_800_000, 86_400_000]);
  });

  it('derives SVC_PUBLIC_URL from host and port', () => {
    expect(loadConfig({ SVC_HOST: '0.0.0.0', SVC_PORT: '9000' }).publicUrl).toBe('http://0.0.0.0:9000');
    expect(loadConfig({ SVC_PUBLIC_URL: 'https://svc.example.com/some/path' }).publicUrl).toBe('https://svc.example.com');
  });

  it('every setting is documented in the README configuration table', async () => {
    const { readFile } = await import('node:fs/promises');
    const readme = await readFile(new URL('../../../../README.md', import.meta.url), 'utf8');
    for (const s of SETTINGS) expect(readme, s.env).toContain(`\`${s.env}\``);
  });
});
