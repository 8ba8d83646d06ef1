import { parseCidrList, type CidrList } from '../lib/cidr.js';
import { parseBrokers, type BrokerSetting } from './brokers.js';

/**
 * Every setting svc reads, with its default and one line of documentation. `loadConfig` is the only
 * place that touches process.env; the README's configuration table is written from this list.
 */

import ipaddr from 'ipaddr.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly databaseUrl: string;
  readonly sqliteSynchronous: 'FULL' | 'NORMAL';
  readonly publicUrl: string;
  readonly logLevel: LogLevel;
  readonly adminEmail: string | null;
  readonly adminPassword: string | null;
  /** 32-byte key as 64 hex characters, or null to use the key file beside the SQLite database. */
  readonly secretKey: string | null;
  readonly sessionIdleMinutes: number;
  readonly sessionMaxHours: number;
  readonly loginMaxFailures: number;
  readonly bodyMaxBytes: number;
  readonly jsonMaxDepth: number;
  /** Delay before each attempt, in milliseconds; its length is the maximum number of attempts. */
  readonly webhookRetrySchedule: readonly number[];
  readonly webhookTimeoutMs: number;
  readonly webhookLeaseSeconds: number;
  readonly webhookConcurrency: number;
  readonly webhookTargetConcurrency: number;
  readonly webhookPollMs: number;
  /** Parsed at start: a bad entry stops the process instead of failing the first save of a target. */
  readonly webhookAllowCidrs: CidrList;
  readonly webhookCaFile: string | null;
  /** One name look-up for a delivery, A and AAAA together. */
  readonly dnsTimeoutMs: number;
  /** Browser origins allowed to call /api/v1 (CORS); empty allows none. */
  readonly corsOrigins: readonly string[];
  readonly requestTimeoutMs: number;
  /** Whose X-Forwarded-For decides the client address: nobody (false), everybody (true), n hops, or these addresses. */
  readonly trustProxy: boolean | number | readonly string[];
  /** When set, /metrics needs `Authorization: Bearer <it>`. */
  readonly metricsToken: string | null;
  /** Largest JSON answer of one list page, in bytes; a page always holds at least one item. */
  readonly listMaxBytes: number;
  /** Event streams (SSE) one token, or one admin session, may hold open in one process. */
  readonly streamsPerToken: number;
  /** Most operations in one `POST /api/v1/batch` (one transaction). */
  readonly batchMaxOperations: number;
  /** Auto-disable (SPEC §10): this long without a successful attempt, with at least the minimum of failed ones. */
  readonly webhookDisableAfterMs: number;
  readonly webhookDisableMinFailures: number;
  /** Retention in days (decimals allowed): delivered jobs from delivery, dead jobs from death, events from occurrence. */
  readonly retentionDeliveredDays: number;
  readonly retentionDeadDays: number;
  readonly retentionEventsDays: number;
  /** A records list or count running longer than this is stopped (503 query_timeout), on both databases. */
  readonly queryTimeoutMs: number;
  /** Bytes an event stream's client may leave unread before it is cut off (an event larger than this still goes whole). */
  readonly streamBufferBytes: number;
  /** Long-polls (`GET /api/v1/events?wait=`) one token, or one admin session, may hold waiting in one process. */
  readonly longPollsPerToken: number;
  /** SQLite: threads that run records queries off the event loop, each with its own read connection. */
  readonly sqliteReaders: number;
  /** Message brokers targets may deliver into (SPEC §14), by name; their URLs never leave the delivering processes. */
  readonly brokers: readonly BrokerSetting[];
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Parser<T> = (raw: string) => T;

export interface Setting<K extends keyof Config = keyof Config> {
  readonly key: K;
  readonly env: string;
  /** Text shown in docs; `undefined` default means "derived" (see doc). */
  readonly defaultText: string;
  readonly doc: string;
  readonly parse: Parser<Config[K]>;
  /**
   * The value when the variable is unset, for a setting whose default is not a value of its own (unset, none, derived
   * from other settings). Without it the default is `parse(defaultText)`: the documented default is the one used.
   */
  readonly fallback?: (partial: Partial<Config>) => Config[K];
}

/** The largest SVC_LIST_MAX_BYTES: `svc listen` reads a feed page up to it (cli/listen-start.ts), whatever svc is set to. */
export const LIST_MAX_BYTES_LIMIT = 1024 * 1024 * 1024;

const integer =
  (min: number, max: number): Parser<number> =>
  (raw) => {
    if (!/^\d+$/.test(raw.trim())) throw new Error(`expected an integer, got "${raw}"`);
    const n = Number(raw.trim());
    if (n < min || n > max) throw new Error(`must be between ${min} and ${max}, got ${n}`);
    return n;
  };

const oneOf =
  <const T extends string>(...values: T[]): Parser<T> =>
  (raw) => {
    const v = raw.trim();
    const match = values.find((x) => x.toLowerCase() === v.toLowerCase());
    if (!match) throw new Error(`must be one of ${values.join(', ')}, got "${raw}"`);
    return match;
  };

const text: Parser<string> = (raw) => raw;
const optionalText: Parser<string | null> = (raw) => (raw === '' ? null : raw);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `0s,5s,5m` → [0, 5000, 300000]. Exported for tests. */
export function parseDurationList(raw: string): number[] {
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) throw new Error('expected a comma-separated list such as 0s,5s,5m');
  if (parts.length > 100) throw new Error('at most 100 attempts');
  return parts.map((part) => {
    const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(part);
    if (!m) throw new Error(`"${part}" is not <integer>ms|s|m|h|d`);
    const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
    if (ms > 30 * UNIT_MS.d!) throw new Error(`"${part}" is longer than 30 days`);
    return ms;
  });
}

/** One duration such as `5d` or `90m`, in milliseconds. */
const duration =
  (maxMs: number): Parser<number> =>
  (raw) => {
    const m = /^(\d{1,9})(ms|s|m|h|d)$/.exec(raw.trim());
    if (!m) throw new Error(`"${raw}" is not <integer>ms|s|m|h|d`);
    const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
    if (ms < 1 || ms > maxMs) throw new Error(`must be between 1ms and ${maxMs / UNIT_MS.d!}d, got "${raw}"`);
    return ms;
  };

/** Days, decimals allowed (`0.0001` is about nine seconds, for tests), more than zero. */
const days: Parser<number> = (raw) => {
  if (!/^\d{1,6}(\.\d{1,9})?$/.test(raw.trim())) throw new Error(`expected a number of days such as 30 or 0.5, got "${raw}"`);
  const n = Number(raw.trim());
  if (n <= 0 || n > 36_500) throw new Error(`must be more than 0 and at most 36500, got ${raw}`);
  return n;
};

const publicUrl: Parser<string> = (raw) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('must be http: or https:');
  return url.origin;
};

const secretKey: Parser<string | null> = (raw) => {
  if (raw === '') return null;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) throw new Error('must be 32 bytes written as 64 hexadecimal characters');
  return raw.toLowerCase();
};

const databaseUrl: Parser<string> = (raw) => {
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(raw)) {
    throw new Error('must start with sqlite: or postgres://');
  }
  return raw;
};

const originList: Parser<readonly string[]> = (raw) =>
  raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => {
      let url: URL;
      try {
        url = new URL(p);
      } catch {
        throw new Error(`"${p}" is not an origin such as https://app.example.com`);
      }
      // An origin is compared as the browser sends it: scheme, host and port only, never a path or a wildcard.
      if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== p.replace(/\/$/, '')) {
        throw new Error(`"${p}" is not an origin such as https://app.example.com (scheme, host and port only)`);
      }
      return url.origin;
    });

// proxy-addr's names for address ranges, besides addresses and CIDRs.
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const trustProxy: Parser<boolean | number | readonly string[]> = (raw) => {
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'false') return false;
  if (v === 'true') return true;
  if (/^\d+$/.test(v)) return integer(1, 100)(v);
  return v.split(',').map((p) => {
    const entry = p.trim();
    if (PROXY_RANGE_NAMES.has(entry)) return entry;
    const valid = entry.includes('/') ? ipaddr.isValidCIDR(entry) : ipaddr.isValid(entry);
    if (!valid) throw new Error(`"${entry}" is not true, a hop count, an address or a CIDR`);
    return entry;
  });
};

const bearerSecret: Parser<string | null> = (raw) => {
  if (raw === '') return null;
  if (!/^[\x21-\x7e]{16,256}$/.test(raw)) throw new Error('must be 16 to 256 visible ASCII characters');
  return raw;
};

function setting<K extends keyof Config>(s: Setting<K>): Setting<K> {
  return s;
}

export const SETTINGS: readonly Setting[] = [
  setting({ key: 'host', env: 'SVC_HOST', defaultText: '127.0.0.1', doc: 'address the HTTP API listens on', parse: text }),
  setting({ key: 'port', env: 'SVC_PORT', defaultText: '8080', doc: 'port the HTTP API listens on (0 picks a free one, which the default SVC_PUBLIC_URL then names)', parse: integer(0, 65535) }),
  setting({
    key: 'databaseUrl', env: 'SVC_DATABASE_URL', defaultText: 'sqlite:./data/svc.db',
    doc: '`sqlite:<path>` (embedded) or `postgres://…` (several processes share it)', parse: databaseUrl,
  }),
  setting({
    key: 'sqliteSynchronous', env: 'SVC_SQLITE_SYNCHRONOUS', defaultText: 'FULL',
    doc: 'SQLite durability; NORMAL is faster and may lose the last commits on power loss (never on a process crash)',
    parse: oneOf<'FULL' | 'NORMAL'>('FULL', 'NORMAL'),
  }),
  setting({
    key: 'publicUrl', env: 'SVC_PUBLIC_URL', defaultText: 'http://<host>:<port>',
    doc: "the service's own origin, for links and the Origin check; set it when browsers reach svc by another name (a proxy, or SVC_HOST=0.0.0.0)", parse: publicUrl,
    fallback: (c) => `http://${c.host?.includes(':') ? `[${c.host}]` : c.host}:${c.port}`,
  }),
  setting({ key: 'logLevel', env: 'SVC_LOG_LEVEL', defaultText: 'info', doc: 'debug, info, warn, error; JSON lines on stdout', parse: oneOf<LogLevel>('debug', 'info', 'warn', 'error') }),
  setting({ key: 'adminEmail', env: 'SVC_ADMIN_EMAIL', defaultText: 'unset', doc: 'with SVC_ADMIN_PASSWORD: the first admin, created at start when none exists', parse: optionalText, fallback: () => null }),
  setting({ key: 'adminPassword', env: 'SVC_ADMIN_PASSWORD', defaultText: 'unset', doc: 'see SVC_ADMIN_EMAIL', parse: optionalText, fallback: () => null }),
  setting({
    key: 'secretKey', env: 'SVC_SECRET_KEY', defaultText: 'key file beside the SQLite database',
    doc: '64 hex characters; encrypts webhook signing secrets at rest; required with PostgreSQL', parse: secretKey, fallback: () => null,
  }),
  setting({ key: 'sessionIdleMinutes', env: 'SVC_SESSION_IDLE_MINUTES', defaultText: '30', doc: 'admin session idle expiry', parse: integer(1, 10_080) }),
  setting({ key: 'sessionMaxHours', env: 'SVC_SESSION_MAX_HOURS', defaultText: '12', doc: 'admin session absolute expiry', parse: integer(1, 720) }),
  setting({ key: 'loginMaxFailures', env: 'SVC_LOGIN_MAX_FAILURES', defaultText: '10', doc: 'failed logins per email and per client address within 15 minutes before rate_limited', parse: integer(1, 1_000_000) }),
  setting({ key: 'bodyMaxBytes', env: 'SVC_BODY_MAX_BYTES', defaultText: '1048576', doc: 'largest request body', parse: integer(1024, 100 * 1024 * 1024) }),
  setting({ key: 'jsonMaxDepth', env: 'SVC_JSON_MAX_DEPTH', defaultText: '32', doc: 'deepest nesting of a JSON request body', parse: integer(2, 1000) }),
  setting({
    key: 'webhookRetrySchedule', env: 'SVC_WEBHOOK_RETRY_SCHEDULE', defaultText: '0s,5s,5m,30m,2h,5h,10h,10h',
    doc: 'delay before each attempt; its length is the maximum number of attempts', parse: parseDurationList,
  }),
  setting({ key: 'webhookTimeoutMs', env: 'SVC_WEBHOOK_TIMEOUT_MS', defaultText: '15000', doc: 'one attempt: connect to response status', parse: integer(100, 300_000) }),
  setting({ key: 'webhookLeaseSeconds', env: 'SVC_WEBHOOK_LEASE_SECONDS', defaultText: '60', doc: 'how long a claimed job stays claimed before another worker may take it', parse: integer(1, 86_400) }),
  setting({ key: 'webhookConcurrency', env: 'SVC_WEBHOOK_CONCURRENCY', defaultText: '64', doc: 'attempts in flight per process', parse: integer(1, 10_000) }),
  setting({ key: 'webhookTargetConcurrency', env: 'SVC_WEBHOOK_TARGET_CONCURRENCY', defaultText: '8', doc: 'attempts in flight per target per process', parse: integer(1, 10_000) }),
  setting({ key: 'webhookPollMs', env: 'SVC_WEBHOOK_POLL_MS', defaultText: '1000', doc: 'fallback poll when no wake-up arrives', parse: integer(10, 3_600_000) }),
  setting({ key: 'webhookAllowCidrs', env: 'SVC_WEBHOOK_ALLOW_CIDRS', defaultText: 'empty', doc: 'destinations that would otherwise be refused as private, e.g. 127.0.0.0/8,::1/128', parse: parseCidrList, fallback: () => [] }),
  setting({ key: 'webhookCaFile', env: 'SVC_WEBHOOK_CA_FILE', defaultText: 'unset', doc: 'PEM file of extra certificate authorities trusted for deliveries', parse: optionalText, fallback: () => null }),
  setting({ key: 'dnsTimeoutMs', env: 'SVC_DNS_TIMEOUT_MS', defaultText: '5000', doc: 'name resolution for one delivery (hosts file, then DNS); it holds no thread meanwhile', parse: integer(100, 60_000) }),
  setting({
    key: 'corsOrigins', env: 'SVC_CORS_ORIGINS', defaultText: 'none',
    doc: 'comma-separated origins allowed to call /api/v1 from a browser (preflight answered, credentials never allowed); the admin API never answers CORS',
    parse: originList, fallback: () => [],
  }),
  setting({
    key: 'requestTimeoutMs', env: 'SVC_REQUEST_TIMEOUT_MS', defaultText: '30000',
    doc: 'a request whose headers and body have not arrived by then is answered 408 request_timeout and closed; a request held by a database outage answers 503 unavailable within it (PostgreSQL connects give up at half of it, at most 10 s)',
    parse: integer(100, 3_600_000),
  }),
  setting({
    key: 'trustProxy', env: 'SVC_TRUST_PROXY', defaultText: 'off',
    doc: 'whose X-Forwarded-For decides the client address: `true` (any), a hop count, or comma-separated addresses/CIDRs of your proxies',
    parse: trustProxy, fallback: () => false,
  }),
  setting({
    key: 'metricsToken', env: 'SVC_METRICS_TOKEN', defaultText: 'unset',
    doc: 'when set, /metrics needs `Authorization: Bearer <it>` (16 to 256 visible ASCII characters)', parse: bearerSecret, fallback: () => null,
  }),
  // 4 MiB: four records of the largest body; a page of big records costs a few times this in memory, never 500 of them.
  setting({
    key: 'listMaxBytes', env: 'SVC_LIST_MAX_BYTES', defaultText: '4194304',
    doc: 'a list page stops before its JSON would exceed this many bytes (it always holds at least one item)',
    parse: integer(1024, LIST_MAX_BYTES_LIMIT),
  }),
  setting({
    key: 'streamsPerToken', env: 'SVC_STREAMS_PER_TOKEN', defaultText: '10',
    doc: 'event streams (GET /api/v1/events/stream) one token, or one admin session, may hold open in one process; beyond, rate_limited',
    parse: integer(1, 100_000),
  }),
  setting({
    key: 'batchMaxOperations', env: 'SVC_BATCH_MAX_OPERATIONS', defaultText: '100',
    doc: 'most operations in one `POST /api/v1/batch` (all of them one transaction)', parse: integer(1, 10_000),
  }),
  setting({
    key: 'webhookDisableAfterMs', env: 'SVC_WEBHOOK_DISABLE_AFTER', defaultText: '5d',
    doc: 'a target with no successful attempt for this long (from its first failed attempt after its last success) is disabled (`failing`), given SVC_WEBHOOK_DISABLE_MIN_FAILURES',
    parse: duration(365 * UNIT_MS.d!),
  }),
  setting({
    key: 'webhookDisableMinFailures', env: 'SVC_WEBHOOK_DISABLE_MIN_FAILURES', defaultText: '10',
    doc: 'failed attempts (in that time) a target needs before it is disabled as failing; a 410 Gone answer disables it at once',
    parse: integer(1, 1_000_000),
  }),
  setting({
    key: 'retentionDeliveredDays', env: 'SVC_RETENTION_DELIVERED_DAYS', defaultText: '30',
    doc: 'delivered jobs and their attempts are pruned this many days after delivery (decimals allowed)', parse: days,
  }),
  setting({
    key: 'retentionDeadDays', env: 'SVC_RETENTION_DEAD_DAYS', defaultText: '90',
    doc: 'dead jobs and their attempts are pruned this many days after they died (decimals allowed)', parse: days,
  }),
  setting({
    key: 'retentionEventsDays', env: 'SVC_RETENTION_EVENTS_DAYS', defaultText: '30',
    doc: 'events no unfinished or dead job needs are pruned this many days after they occurred (decimals allowed); older feed cursors get 410 cursor_expired',
    parse: days,
  }),
  setting({
    key: 'queryTimeoutMs', env: 'SVC_QUERY_TIMEOUT_MS', defaultText: '10000',
    doc: "a records list or count (filter, sort, count), a target's stats, or the check of the records before a field is made required, running longer than this is stopped: 503 query_timeout (SQLite: waiting for a reader thread counts; a running one is ended and replaced)",
    parse: integer(1, 600_000),
  }),
  setting({
    key: 'streamBufferBytes', env: 'SVC_STREAM_BUFFER_BYTES', defaultText: '8388608',
    doc: 'an event stream whose client leaves more than this many bytes unread is closed (it resumes with Last-Event-ID); one event larger than this is still sent whole',
    parse: integer(65_536, 1024 * 1024 * 1024),
  }),
  setting({
    key: 'longPollsPerToken', env: 'SVC_LONG_POLLS_PER_TOKEN', defaultText: '10',
    doc: 'long-polls (GET /api/v1/events?wait=) one token, or one admin session, may hold waiting in one process; beyond, rate_limited',
    parse: integer(1, 100_000),
  }),
  setting({
    key: 'sqliteReaders', env: 'SVC_SQLITE_READERS', defaultText: '2',
    doc: 'SQLite: threads that run records lists and counts off the event loop, each with its own read-only connection (WAL); 0 runs them on the main thread, with no query timeout',
    parse: integer(0, 64),
  }),
  setting({
    key: 'brokers', env: 'SVC_BROKERS', defaultText: 'none',
    doc: 'message brokers targets may deliver into: comma-separated `<name>=<url>` (`nats://`, `amqp://`/`amqps://`, `redis://`/`rediss://`, credentials in the URL; names of 1 to 32 a-z, 0-9, -); set it alike on every process (API processes check the names, delivering ones connect)',
    parse: parseBrokers, fallback: () => [],
  }),
];
