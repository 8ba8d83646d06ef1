import type { Logger } from 'pino';
import { Gauge, type Registry } from '../../lib/prometheus.js';
import { brokerAddress, type BrokerKind, type BrokerSetting } from '../../config/brokers.js';
import { NO_TRACE } from '../connection-trace.js';
import type { TargetRow } from '../targets-store.js';
import { errorDetail, NOT_CONNECTED, type BrokerConnection, type ConnectionEvents, type ConnectionFactory, type ConnectionLimits, type PublishResult } from './broker-connection.js';
import type { AttemptOutcome, DeliverySender, OutgoingMessage } from './sender.js';

/**
 * Each kind's client, loaded when a process has a broker of that kind (the clients are most of the bundle's start:
 * @redis/client alone builds its command tables when loaded); a process without SVC_BROKERS loads none of them.
 */
const FACTORIES: Readonly<Record<BrokerKind, () => Promise<ConnectionFactory>>> = {
  nats: async () => (await import('./nats.js')).natsConnection,
  rabbitmq: async () => (await import('./rabbitmq.js')).rabbitmqConnection,
  redis: async () => (await import('./redis.js')).redisConnection,
};

/**
 * A broker connection whose client is loaded at start(): until then (and if the load failed) it is not connected, and
 * a publish is the pool's `connection_failed`, as for a broker that is down.
 */
function lazyConnection(setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number, logger: Logger, limits?: ConnectionLimits): BrokerConnection {
  let real: BrokerConnection | null = null;
  let closed = false;
  return {
    get connected() {
      return real?.connected ?? false;
    },
    start() {
      FACTORIES[setting.kind]()
        .then((factory) => {
          if (closed) return;
          real = factory(setting, events, timeoutMs, limits);
          real.start();
        })
        .catch((err: unknown) => {
          logger.error({ broker: setting.name, detail: errorDetail(err) }, 'the broker client could not be loaded');
          events.state(false, errorDetail(err));
        });
    },
    publish: (target, message, deadlineMs) => (real ? real.publish(target, message, deadlineMs) : Promise.resolve(NOT_CONNECTED(setting.name))),
    async close() {
      closed = true;
      await real?.close();
    },
  };
}

export interface BrokerPoolOptions {
  /** SVC_WEBHOOK_TIMEOUT_MS: one attempt, publish to acknowledgement; also a connection attempt's limit. */
  timeoutMs: number;
  logger: Logger;
  /** What bounds a connection's unanswered publishes (redis.ts); without it, the default concurrency's. */
  limits?: ConnectionLimits;
}

interface Entry {
  setting: BrokerSetting;
  connection: BrokerConnection;
  /** The state last logged: null before the first report, so the first failure is logged too. */
  reported: boolean | null;
  /** Resolves at the first report: connected, or the first connection attempt failed. */
  firstReport: Promise<void>;
  reportedFirst: () => void;
}

/**
 * The broker senders of one delivering process (SPEC §14): one connection per configured broker, opened in the
 * background at start (an unreachable broker never delays the start, nor fails /readyz: it is retried with a backoff,
 * logged once each way and shown in `svc_broker_connected{broker}`). As a DeliverySender it bounds every attempt by
 * the timeout and turns a publish's result into the attempt's facts.
 */
export class BrokerPool implements DeliverySender {
  private readonly entries = new Map<string, Entry>();

  constructor(settings: readonly BrokerSetting[], private readonly opts: BrokerPoolOptions) {
    for (const setting of settings) {
      const connection = lazyConnection(setting, { state: (up, detail) => this.changed(setting.name, up, detail) }, opts.timeoutMs, opts.logger, opts.limits);
      let reportedFirst = () => {};
      const firstReport = new Promise<void>((resolve) => (reportedFirst = resolve));
      this.entries.set(setting.name, { setting, connection, reported: null, firstReport, reportedFirst });
    }
  }

  start(): void {
    for (const { connection } of this.entries.values()) connection.start();
  }

  /** Each configured broker and whether this process is connected to it now. */
  states(): Array<{ name: string; connected: boolean }> {
    return [...this.entries.values()].map((e) => ({ name: e.setting.name, connected: e.connection.connected }));
  }

  async deliver(target: TargetRow, message: OutgoingMessage, signal: AbortSignal): Promise<AttemptOutcome> {
    const startedAt = performance.now();
    const outcome = (r: PublishResult): AttemptOutcome => {
      const durationMs = Math.round(performance.now() - startedAt);
      return r.ok ? { kind: 'accepted', snippet: r.snippet, durationMs, trace: NO_TRACE } : { kind: 'failure', code: r.code, message: r.message, durationMs, trace: NO_TRACE };
    };
    const entry = target.broker === null ? undefined : this.entries.get(target.broker);
    if (!entry || entry.setting.kind !== target.type) {
      return outcome({ ok: false, code: 'connection_failed', message: `No ${target.type} broker "${target.broker}" is configured in this process (SVC_BROKERS).` });
    }
    if (signal.aborted) return outcome({ ok: false, code: 'connection_failed', message: 'The attempt was cancelled.' });
    const { timeoutMs } = this.opts;
    let timer: NodeJS.Timeout | undefined;
    let cancel: (() => void) | undefined;
    let over = false;
    // A publish left behind by the deadline or a cancel still settles; nothing waits for it (a late acknowledgement
    // is lost, and the job is published again: at least once, de-duplicated by the delivery id).
    const published = (async (): Promise<PublishResult> => {
      // A process that has just started is still connecting: its first attempts wait for the first outcome (connected,
      // or the first connection attempt failed) instead of failing before a broker that is up could answer. Without
      // it, every job claimed in a worker's first moments used an attempt and waited for the schedule's next step
      // (5 s by default), measured in W15.
      if (entry.reported === null) await entry.firstReport;
      if (over) return { ok: false, code: 'timeout', message: 'Not sent: the attempt ended while the connection was being opened.' };
      return entry.connection.publish(target, message, timeoutMs);
    })().catch((err: unknown): PublishResult => ({ ok: false, code: 'connection_failed', message: `The publish failed (${errorDetail(err)}).` }));
    const late = new Promise<PublishResult>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, code: 'timeout', message: `The broker did not acknowledge within ${timeoutMs} ms.` }), timeoutMs);
      cancel = () => resolve({ ok: false, code: 'connection_failed', message: 'The attempt was cancelled.' });
      signal.addEventListener('abort', cancel, { once: true });
    });
    try {
      return outcome(await Promise.race([published, late]));
    } finally {
      over = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', cancel!);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.connection.close().catch(() => {})));
  }

  private changed(name: string, up: boolean, detail?: string): void {
    const entry = this.entries.get(name);
    entry?.reportedFirst();
    if (!entry || entry.reported === up) return;
    entry.reported = up;
    const fields = { broker: entry.setting.name, kind: entry.setting.kind, address: brokerAddress(entry.setting.url) };
    if (up) this.opts.logger.info(fields, 'broker connected');
    else this.opts.logger.warn({ ...fields, error: detail }, 'broker not connected: retrying in the background; its targets\' attempts fail with connection_failed meanwhile');
  }
}

/** `svc_broker_connected{broker}`: 1 while this process is connected to the broker, 0 while it retries. */
export function registerBrokerMetrics(registry: Registry, pool: BrokerPool): void {
  new Gauge({
    name: 'svc_broker_connected',
    help: 'Whether this process is connected to the configured broker (1) or retrying (0)',
    labelNames: ['broker'],
    registers: [registry],
    collect() {
      for (const { name, connected } of pool.states()) this.set({ broker: name }, connected ? 1 : 0);
    },
  });
}
