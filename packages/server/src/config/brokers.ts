/**
 * `SVC_BROKERS` (SPEC §14): the message brokers targets may deliver into, named by the operator. A target names a
 * broker, never an address: the URL (credentials included) stays in the environment of the processes that deliver.
 */

export type BrokerKind = 'nats' | 'rabbitmq' | 'redis';
export const BROKER_KINDS: readonly BrokerKind[] = ['nats', 'rabbitmq', 'redis'];

export interface BrokerSetting {
  readonly name: string;
  readonly kind: BrokerKind;
  /** As written, credentials included: never logged (see brokerAddress). */
  readonly url: string;
}

const KIND_OF_SCHEME: Readonly<Record<string, BrokerKind>> = {
  'nats:': 'nats',
  'amqp:': 'rabbitmq',
  'amqps:': 'rabbitmq',
  'redis:': 'redis',
  'rediss:': 'redis',
};

export const BROKER_NAME = /^[a-z0-9-]{1,32}$/;
/** More would be a configuration mistake, and each is a connection per delivering process. */
const MAX_BROKERS = 32;

/**
 * `nats=nats://127.0.0.1:4222,events=amqp://user:pass@mq:5672/vhost` → one setting each. Messages name the entry by
 * its position and name and never repeat the URL: it may hold a password, and a start that fails prints them.
 */
export function parseBrokers(raw: string): readonly BrokerSetting[] {
  const entries = raw.split(',').map((e) => e.trim()).filter((e) => e !== '');
  if (entries.length > MAX_BROKERS) throw new Error(`at most ${MAX_BROKERS} brokers`);
  const seen = new Set<string>();
  const settings = entries.map((entry, i): BrokerSetting => {
    const eq = entry.indexOf('=');
    const name = eq === -1 ? '' : entry.slice(0, eq).trim();
    if (eq === -1) throw new Error(`entry ${i + 1} is not <name>=<url>`);
    if (!BROKER_NAME.test(name)) throw new Error(`entry ${i + 1}: the name must be 1 to 32 of a-z, 0-9 and -`);
    if (seen.has(name)) throw new Error(`"${name}" is named twice`);
    seen.add(name);
    const text = entry.slice(eq + 1).trim();
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error(`"${name}": not an absolute URL`);
    }
    const kind = KIND_OF_SCHEME[url.protocol];
    if (kind === undefined) throw new Error(`"${name}": ${url.protocol}// is not nats://, amqp://, amqps://, redis:// or rediss://`);
    if (url.hostname === '') throw new Error(`"${name}": the URL names no host`);
    return Object.freeze({ name, kind, url: text });
  });
  return Object.freeze(settings);
}

/** A broker's URL as a log line or a message may show it: scheme, host and port, no credentials, no path. */
export function brokerAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparsable URL)';
  }
}

/** The host of the broker named `name` as its URL writes it (no credentials, IPv6 without brackets), or null. */
export function brokerHost(brokers: readonly BrokerSetting[], name: string): string | null {
  const setting = brokers.find((b) => b.name === name);
  if (setting === undefined) return null;
  try {
    return new URL(setting.url).hostname.replace(/^\[(.*)\]$/, '$1') || null;
  } catch {
    return null;
  }
}
