import { Counter, Gauge, Histogram, type Registry } from '../lib/prometheus.js';
import type { Database } from '../db/connect.js';
import type { Clock } from '../lib/clock.js';
import { queueStats } from './queue/jobs-store.js';

export interface WebhookMetrics {
  observeAttempt(outcome: string, durationMs: number): void;
}

export function registerWebhookMetrics(registry: Registry, database: Database, clock: Clock): WebhookMetrics {
  const attempts = new Counter({ name: 'svc_webhook_attempts_total', help: 'Delivery attempts by outcome (delivered or error code)', labelNames: ['outcome'], registers: [registry] });
  const latency = new Histogram({
    name: 'svc_webhook_attempt_duration_seconds',
    help: 'Delivery attempt latency',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // Queue gauges are read from the database at scrape time, so every process reports the shared truth. Both
  // gauges share one read per scrape instead of running the queries twice. A read that fails (a database outage)
  // keeps the last values: /metrics still answers, with svc_database_errors_total, when it matters most.
  let pending: { at: number; stats: ReturnType<typeof queueStats> } | null = null;
  let last: Awaited<ReturnType<typeof queueStats>> = { byState: {}, oldestDueAgeMs: 0 };
  const stats = () => {
    const now = clock.now();
    if (!pending || now - pending.at > 1000) {
      pending = { at: now, stats: queueStats(database.db, database.caps).then((read) => (last = read), () => last) };
    }
    return pending.stats;
  };
  new Gauge({
    name: 'svc_webhook_queue_jobs',
    help: 'Unfinished delivery jobs by state',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const current = await stats();
      for (const state of ['pending', 'delivering']) this.set({ state }, current.byState[state] ?? 0);
    },
  });
  new Gauge({
    name: 'svc_webhook_oldest_due_seconds',
    help: 'Age of the oldest due pending job',
    registers: [registry],
    async collect() {
      this.set((await stats()).oldestDueAgeMs / 1000);
    },
  });
  // One labelled child per outcome, kept: labelling by object hashes the labels on every call.
  const byOutcome = new Map<string, ReturnType<typeof attempts.labels>>();
  return {
    observeAttempt(outcome, durationMs) {
      let counter = byOutcome.get(outcome);
      if (!counter) byOutcome.set(outcome, (counter = attempts.labels(outcome)));
      counter.inc();
      latency.observe(durationMs / 1000);
    },
  };
}
