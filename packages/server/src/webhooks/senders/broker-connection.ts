import type { BrokerSetting } from '../../config/brokers.js';
import type { TargetRow } from '../targets-store.js';
import type { FailureCode, OutgoingMessage } from './sender.js';

/**
 * What a broker's connection does for the pool (broker-pool.ts): connect in the background and stay connected by
 * itself, say when that changes, and publish one message until the broker acknowledges it durably, or not.
 */

/** A publish's outcome, before the pool adds its timing: an acknowledgement (with what to show of it), or a failure. */
export type PublishResult = { ok: true; snippet: string } | { ok: false; code: FailureCode; message: string };

export interface ConnectionEvents {
  /** Connected (again), or lost; `detail` is the error's code or short text, never a URL. */
  state(connected: boolean, detail?: string): void;
}

export interface BrokerConnection {
  readonly connected: boolean;
  /** Begins connecting; never throws, never waits for the broker. */
  start(): void;
  /** `deadlineMs`: how long the broker may take to acknowledge (the pool's timer bounds the attempt anyway). */
  publish(target: TargetRow, message: OutgoingMessage, deadlineMs: number): Promise<PublishResult>;
  close(): Promise<void>;
}

export type ConnectionFactory = (setting: BrokerSetting, events: ConnectionEvents, timeoutMs: number, limits?: ConnectionLimits) => BrokerConnection;

export interface ConnectionLimits {
  /** The attempts this process makes at once at most (SVC_WEBHOOK_CONCURRENCY): every publish on the connection is one. */
  concurrency: number;
  /** How long the broker may leave svc unanswered before its connection is dropped (BROKER_SILENCE_MS; tests shorten it). */
  silenceMs?: number;
}

/**
 * How long a broker may leave svc unanswered before its connection is dropped and opened again (reconnected as after
 * any loss): a broker whose host still takes bytes and never answers (a paused process, a stalled VM, a path that drops
 * the replies) was otherwise found by RabbitMQ's own 60 s heartbeat after about 2 minutes, by the NATS client's default
 * pings after 4-6 minutes, and on Redis never, while every attempt waited out its timeout. Each client asks in thirds of
 * it (a RabbitMQ heartbeat, a NATS PING, a Redis PING: a few bytes each way every 5 s while idle), so a silent
 * connection is dropped 10-15 s after the broker's last answer.
 */
export const BROKER_SILENCE_MS = 15_000;
export const silenceMs = (limits?: ConnectionLimits): number => limits?.silenceMs ?? BROKER_SILENCE_MS;

/**
 * How long closing a connection waits for the broker to answer (RabbitMQ's CloseOk) before its socket is destroyed
 * instead. A broker that answers closes in milliseconds; one that stopped answering between svc's close and its reply
 * left amqplib waiting for ever, and the worker's stop (SIGTERM of `svc serve`) with it.
 */
export const CLOSE_LIMIT_MS = 2_000;

/**
 * Waits between attempts to (re)connect: 100 ms, doubling, at most 5 s, so a broker back after an outage is found
 * within 5 s, and one that stays down costs a connection attempt every 5 s.
 */
export const reconnectDelayMs = (failures: number): number => Math.min(100 * 2 ** Math.min(failures, 16), MAX_RECONNECT_DELAY_MS);
const MAX_RECONNECT_DELAY_MS = 5_000;

export const NOT_CONNECTED = (name: string): PublishResult => ({ ok: false, code: 'connection_failed', message: `svc is not connected to the broker "${name}" (it retries in the background).` });

/** The part of an error worth logging: its code or its first line, never a URL with credentials in it. */
export function errorDetail(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  const text = err instanceof Error ? err.message : String(err);
  return text.split('\n')[0]!.replace(/[a-z]+:\/\/[^\s]*@/gi, '<url>@').slice(0, 200);
}

/**
 * Keeps one connection open for as long as it runs: opens it, holds it until it is gone, and opens it again, waiting
 * reconnectDelayMs between failed opens. For clients that do not reconnect by themselves (amqplib), and for the first
 * connection of those that do only once connected (the NATS client). `hold` reports the connection up, resolves
 * when it is gone for good, and gives the reason.
 */
export class Supervisor<C> {
  private stopped = false;
  private wake: (() => void) | null = null;
  private current: C | null = null;
  /** Whether a publish may go out now: set by `hold` through state(), cleared when the connection is gone. */
  connected = false;

  constructor(
    private readonly open: () => Promise<C>,
    private readonly hold: (conn: C) => Promise<unknown>,
    private readonly dispose: (conn: C) => Promise<void>,
    private readonly events: ConnectionEvents,
    /** Ends a connection whose `dispose` did not within CLOSE_LIMIT_MS, without the broker: destroys its socket. */
    private readonly abandon: (conn: C) => void = () => {},
  ) {}

  /** The pool logs and counts a change once; repeating a state is harmless. */
  state(up: boolean, detail?: string): void {
    this.connected = up;
    this.events.state(up, detail);
  }

  /** The BrokerConnection of a supervised client: its connection state and lifecycle are this supervisor's. */
  connection(publish: BrokerConnection['publish']): BrokerConnection {
    const supervisor = this;
    return {
      get connected() {
        return supervisor.connected;
      },
      start: () => void supervisor.run(),
      publish,
      close: () => supervisor.stop(),
    };
  }

  private async run(): Promise<void> {
    for (let failures = 0; !this.stopped; ) {
      let conn: C;
      try {
        conn = await this.open();
      } catch (err) {
        this.state(false, errorDetail(err));
        await this.pause(reconnectDelayMs(failures++));
        continue;
      }
      if (this.stopped) {
        await this.dispose(conn).catch(() => {});
        return;
      }
      this.current = conn;
      const openedAt = performance.now();
      const reason = await this.hold(conn);
      this.current = null;
      this.connected = false;
      if (this.stopped) return;
      this.state(false, reason ? errorDetail(reason) : 'closed');
      // A connection that lasted less than the longest wait counts as a failed open: a broker that closes every
      // connection just after its handshake (shutting down, a proxy with no backend behind it) was otherwise opened
      // again at once, 94 AMQP handshakes in 5 s (two log lines each) measured against RabbitMQ behind a proxy.
      if (performance.now() - openedAt < MAX_RECONNECT_DELAY_MS) await this.pause(reconnectDelayMs(failures++));
      else failures = 0;
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  /** Stops reconnecting and closes what is open, waiting at most CLOSE_LIMIT_MS for the broker to answer. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    const conn = this.current;
    if (conn === null) return;
    let timer: NodeJS.Timeout | undefined;
    const closed = await Promise.race([
      this.dispose(conn).then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_LIMIT_MS))),
    ]);
    clearTimeout(timer);
    if (!closed) this.abandon(conn);
  }
}

