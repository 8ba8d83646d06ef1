import { ConfigError, SETTINGS, type Config } from './schema.js';

export { ConfigError, type Config } from './schema.js';

/**
 * SVC_* variables that are not the service's settings, so a shell that exports them must still start `svc serve`:
 * `svc listen` takes its token from SVC_TOKEN; the SDK's README, its examples and the receiver guide's code read the
 * service's URL, tokens, a collection, a webhook's URL, secret or public key from these; the tests' seeds replay a
 * randomised run (README, "Tests").
 */
const CLIENT_VARIABLES = [
  'SVC_TOKEN',
  'SVC_URL',
  'SVC_ADMIN_TOKEN',
  'SVC_COLLECTION',
  'SVC_WEBHOOK_URL',
  'SVC_WEBHOOK_SECRET',
  'SVC_WEBHOOK_PUBLIC_KEY',
  'SVC_FUZZ_SEED',
  'SVC_FUZZ_RUNS',
  'SVC_CRASH_SEED',
];

/**
 * Reads every SVC_* variable once, validates it and returns a frozen Config. A bad value throws
 * ConfigError naming the variable; an unknown SVC_* variable is reported too, since a typo there
 * would otherwise silently fall back to a default.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const out: Partial<Record<keyof Config, unknown>> = {};
  for (const s of SETTINGS) {
    if (s.key in overrides) {
      out[s.key] = overrides[s.key];
      continue;
    }
    const raw = env[s.env];
    if (raw === undefined) {
      // The documented default is the one used: parsed from the same text the README shows (schema.ts).
      out[s.key] = s.fallback ? s.fallback(out as Partial<Config>) : s.parse(s.defaultText);
      continue;
    }
    try {
      out[s.key] = s.parse(raw);
    } catch (err) {
      throw new ConfigError(s.env, (err as Error).message);
    }
  }
  const known = new Set([...SETTINGS.map((s) => s.env), ...CLIENT_VARIABLES]);
  const unknown = Object.keys(env).filter((k) => k.startsWith('SVC_') && !known.has(k) && !k.startsWith('SVC_TEST_'));
  if (unknown.length > 0) throw new ConfigError(unknown[0]!, 'unknown setting (see the configuration table in the README)');
  const config = out as Config;
  if ((config.adminEmail === null) !== (config.adminPassword === null)) {
    throw new ConfigError(config.adminEmail === null ? 'SVC_ADMIN_EMAIL' : 'SVC_ADMIN_PASSWORD', 'SVC_ADMIN_EMAIL and SVC_ADMIN_PASSWORD go together');
  }
  if (config.adminPassword !== null && config.adminPassword.length < 12) {
    throw new ConfigError('SVC_ADMIN_PASSWORD', 'must be at least 12 characters');
  }
  if (config.databaseUrl.startsWith('postgres') && config.secretKey === null) {
    throw new ConfigError('SVC_SECRET_KEY', 'is required with PostgreSQL (64 hex characters; e.g. `openssl rand -hex 32`)');
  }
  if (config.webhookLeaseSeconds * 1000 <= config.webhookTimeoutMs) {
    // A lease shorter than an attempt lets a second worker take a job that is still being delivered.
    throw new ConfigError('SVC_WEBHOOK_LEASE_SECONDS', `must be longer than SVC_WEBHOOK_TIMEOUT_MS (${config.webhookTimeoutMs} ms)`);
  }
  return Object.freeze({
    ...config,
    webhookRetrySchedule: Object.freeze([...config.webhookRetrySchedule]),
    corsOrigins: Object.freeze([...config.corsOrigins]),
    trustProxy: Array.isArray(config.trustProxy) ? Object.freeze([...config.trustProxy]) : config.trustProxy,
  });
}
