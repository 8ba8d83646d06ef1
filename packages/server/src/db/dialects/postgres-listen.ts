import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Tables } from '../tables.js';
import type { OutageSettings } from './postgres-outages.js';
import type { JobSignal } from './types.js';

const FIRST_RETRY_MS = 250;

/**
 * A notice's payload may hold under 8,000 bytes: the targets it names take at most this many, else it names none
 * (which wakes a worker for everything). About 260 target ids.
 */
export const NOTICE_TARGETS_MAX_BYTES = 7_900;

/** The payload that names these targets: their ids, comma-separated, or '' (everything) for none or too many. */
export function noticeTargets(targets: readonly string[] | null): string {
  if (targets === null || targets.length === 0) return '';
  const text = targets.join(',');
  return Buffer.byteLength(text) > NOTICE_TARGETS_MAX_BYTES ? '' : text;
}
/** Short: a worker or feed reader hears wake-ups again within this of the database's return. */
const MAX_RETRY_MS = 2_000;

/**
 * NOTIFY on one channel; one LISTEN connection per channel and process, opened while anyone subscribes. A LISTEN
 * connection that breaks (the server restarted, the network cut it) or cannot be opened is tried again, with
 * backoff, for as long as anyone subscribes; once it is back every subscriber is woken, since what was notified
 * meanwhile is lost and each must look for itself. Until then the subscribers' own polls keep them going, so a
 * subscription never fails: it resolves once the first try to listen has succeeded or failed.
 */
export function channelSignal(notices: Notices, url: string, channel: string, settings: OutageSettings): JobSignal & { close(): Promise<void> } {
  let listener: pg.Client | null = null;
  let opening: Promise<boolean> | null = null;
  let retry: NodeJS.Timeout | null = null;
  let failures = 0;
  let closed = false;
  const subscribers = new Set<(targets: readonly string[] | null) => void>();
  const wanted = () => !closed && subscribers.size > 0;
  const wakeAll = () => subscribers.forEach((s) => s(null));
  // A notice's payload names targets, comma-separated (noticeTargets), or is empty: everything.
  const heard = (message: pg.Notification) => {
    const targets = message.payload ? message.payload.split(',') : null;
    subscribers.forEach((s) => s(targets));
  };

  const drop = (client: pg.Client) => void client.end().catch(() => {});

  const open = async (): Promise<boolean> => {
    const client = new pg.Client({ connectionString: url, ...settings });
    client.on('error', () => {
      if (listener !== client) return;
      listener = null;
      drop(client);
      retryLater();
    });
    client.on('notification', heard);
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch {
      drop(client);
      return false;
    }
    if (!wanted()) {
      drop(client);
      return true;
    }
    listener = client;
    return true;
  };

  /** One try at a time; false when it failed (a retry is then scheduled). */
  const ensure = (): Promise<boolean> => {
    if (listener || !wanted()) return Promise.resolve(true);
    opening ??= open().then((ok) => {
      opening = null;
      if (!ok) retryLater();
      return ok;
    });
    return opening;
  };

  function retryLater(): void {
    if (retry || !wanted()) return;
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** failures);
    failures += 1;
    retry = setTimeout(() => {
      retry = null;
      void ensure().then((ok) => {
        if (!ok || !listener) return;
        failures = 0;
        wakeAll();
      });
    }, delay);
    retry.unref();
  }

  const stopListening = async () => {
    if (retry) clearTimeout(retry);
    retry = null;
    const l = listener;
    listener = null;
    if (l) await l.end().catch(() => {});
  };

  return {
    notify: (targets) => notices.send(channel, targets ?? null),
    subscribe: async (fn) => {
      subscribers.add(fn);
      await ensure();
      return async () => {
        subscribers.delete(fn);
        if (subscribers.size === 0) await stopListening();
      };
    },
    close: async () => {
      closed = true;
      subscribers.clear();
      await opening;
      await stopListening();
    },
  };
}

/** Notices for several channels, sent after the commits they announce (coalescedNotices). */
export interface Notices {
  /** Resolves once a statement carrying this notice has run; fails if that statement failed. */
  send(channel: string, targets: readonly string[] | null): Promise<void>;
  /** Resolves once every notice asked so far has been sent or has failed. */
  settled(): Promise<void>;
}

/** A batch of notices: each channel's targets (`null`: everything). */
export type NoticeBatch = ReadonlyMap<string, readonly string[] | null>;

/** coalescedNotices sending through `db`: one `select pg_notify(…)[, pg_notify(…)]` a batch, a call per channel. */
export function noticesThrough(db: Kysely<Tables>): Notices {
  return coalescedNotices(async (batch) => {
    const calls = [...batch].map(([channel, targets]) => sql`pg_notify(${channel}, ${noticeTargets(targets)})`);
    await sql`select ${sql.join(calls)}`.execute(db);
  });
}

/**
 * Notices sent one statement at a time per process, each after the commits it announces: what is asked while one is
 * on its way is merged (per channel, the targets' union; `null`, everything, absorbs any list) and sent, every channel
 * in one statement, when it is back. A write never NOTIFYs inside its own transaction: PostgreSQL serializes the
 * commits of notifying transactions (PreCommit_Notify holds a cluster-wide lock from before the commit record until
 * after its flush), so writes that notified committed one flush at a time. 64 connections of inserts committed
 * 1,886-3,931/s without a NOTIFY, 1,159-1,685/s with one in the transaction, 2,303-2,964/s with one sent after the
 * commit (bench/README, "Wake-ups after the commit"). A standalone NOTIFY writes no WAL of its own and commits without
 * a flush.
 */
export function coalescedNotices(send: (batch: NoticeBatch) => Promise<void>): Notices {
  let inFlight: Promise<void> = Promise.resolve();
  let queued: { channels: Map<string, Set<string> | null>; sent: Promise<void> } | null = null;
  return {
    send(channel, targets) {
      if (queued === null) {
        const batch: { channels: Map<string, Set<string> | null>; sent: Promise<void> } = { channels: new Map(), sent: Promise.resolve() };
        batch.sent = inFlight.then(() => {
          // From here on a notice joins the next batch: this one's text is fixed.
          if (queued === batch) queued = null;
          return send(new Map([...batch.channels].map(([c, t]) => [c, t === null ? null : [...t]])));
        });
        // The next batch waits for this one's statement, however it ends.
        inFlight = batch.sent.catch(() => {});
        queued = batch;
      }
      const channels = queued.channels;
      const known = channels.get(channel);
      if (targets === null) channels.set(channel, null);
      else if (known === undefined) channels.set(channel, new Set(targets));
      else if (known !== null) for (const t of targets) known.add(t);
      return queued.sent;
    },
    settled: () => inFlight,
  };
}
