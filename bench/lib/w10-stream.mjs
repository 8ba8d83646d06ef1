import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { CORES, cpuSeconds, spawnOn, stop } from './proc.mjs';
import { percentile } from './stats.mjs';
import { admin, recordData, startSvc } from './svc.mjs';

const CLIENTS_MAIN = fileURLToPath(new URL('./w10-clients.mjs', import.meta.url));

/** Clients per process: 200 clients read each burst in four processes, not one after another in one. */
const CLIENTS_PER_PROCESS = 50;

/** Starts `clients` SSE clients in a process of their own on the load core (w10-clients.mjs); resolves once all are open. */
async function clientProcess(url, token, clients, logFile) {
  const child = spawnOn(CORES.load, [process.execPath, CLIENTS_MAIN, url, token, String(clients)], { ipc: true, logFile });
  const failed = child.exitPromise.then(({ code, signal }) => {
    throw new Error(`W10 clients exited (${code ?? signal})`);
  });
  // Raced below; its exit after answering (or on stop) is expected.
  failed.catch(() => {});
  await Promise.race([new Promise((resolve) => child.once('message', resolve)), failed]);
  return {
    /** Once every client has `expect` events (or `timeoutMs` passed): their counts, latencies, CPU and event-loop delay. */
    results: (expect, timeoutMs) => {
      child.send({ expect, timeoutMs });
      return Promise.race([new Promise((resolve) => child.once('message', resolve)), failed]);
    },
    stop: () => stop(child),
  };
}

/** `clients` SSE clients spread over processes of CLIENTS_PER_PROCESS; their results merged (CPU summed, the worst delay). */
async function sseClients(url, token, clients, logFile) {
  const procs = Math.ceil(clients / CLIENTS_PER_PROCESS);
  const sizes = Array.from({ length: procs }, (_, p) => Math.floor(clients / procs) + (p < clients % procs ? 1 : 0));
  const parts = await Promise.all(sizes.map((n) => clientProcess(url, token, n, logFile)));
  return {
    procs,
    results: async (expect, timeoutMs) => {
      const all = await Promise.all(parts.map((p) => p.results(expect, timeoutMs)));
      return {
        counts: all.flatMap((r) => r.counts),
        latencies: all.flatMap((r) => r.latencies),
        cpuSeconds: all.reduce((sum, r) => sum + r.cpuSeconds, 0),
        lag: { p50: Math.max(...all.map((r) => r.lag.p50)), p99: Math.max(...all.map((r) => r.lag.p99)) },
      };
    },
    stop: () => Promise.all(parts.map((p) => p.stop())),
  };
}

/** Writes at a steady rate for `seconds`; returns how many were written. */
async function pacedWrites(url, token, rate, seconds) {
  const dispatcher = new Agent({ connections: 32 });
  const total = rate * seconds;
  const t0 = performance.now();
  const pending = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      fetch(`${url}/api/v1/collections/bench/records`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: recordData(i) }),
      }).then(async (res) => {
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`write: ${res.status}`);
      }),
    );
  }
  await Promise.all(pending);
  await dispatcher.close();
  return total;
}

/**
 * W10: stream fan-out on SQLite. N SSE clients while records are written at a steady rate: every client must get
 * every event; commit → receipt latency (from the event's occurredAt, stamped in the writing transaction); svc's CPU
 * time per (event × client) at each N, and its ratio at the largest N to 1 client.
 */
export async function w10(ctx) {
  const { opts } = ctx;
  const perClient = [];
  for (const clients of opts.streamClients) {
    const dir = ctx.dir(`w10-${clients}`);
    const svc = await startSvc({ mode: 'api', databaseUrl: `sqlite:${join(dir, 'svc.db')}`, tls: ctx.tls, logFile: ctx.logFile(`w10-${clients}`), env: { SVC_STREAMS_PER_TOKEN: String(clients + 10) } });
    try {
      const a = await admin(svc.url);
      await a.collection('bench');
      const writer = await a.token();
      const reader = await a.token(['events:read']);
      const streams = await sseClients(svc.url, reader, clients, ctx.logFile(`w10-${clients}-clients`));
      try {
        const cpu0 = cpuSeconds(svc.pid);
        const harness0 = process.cpuUsage();
        const t0 = performance.now();
        const written = await pacedWrites(svc.url, writer, opts.streamRate, opts.streamSeconds);
        const { counts, latencies, cpuSeconds: clientsCpu, lag } = await streams.results(written, 15_000);
        const cpu = cpuSeconds(svc.pid) - cpu0;
        const seconds = (performance.now() - t0) / 1000;
        const h = process.cpuUsage(harness0);
        // A measuring tool must not be the bottleneck: its CPU (of one core) and event-loop delay show it was not.
        const harness = `writer ${((h.user + h.system) / 1e4 / seconds).toFixed(0)}%, clients ${((clientsCpu / seconds) * 100).toFixed(0)}% of a core in ${streams.procs} process(es) (event-loop delay, worst process p50 ${lag.p50.toFixed(1)} ms, p99 ${lag.p99.toFixed(1)} ms)`;
        const complete = counts.filter((c) => c === written).length;
        latencies.sort((x, y) => x - y);
        const perPair = (cpu / (written * clients)) * 1e6;
        perClient.push({ clients, perPair, cpu, written });
        ctx.progress('W10', `${clients} client(s): ${complete}/${clients} got all ${written} events; p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; svc CPU ${cpu.toFixed(2)} s = ${perPair.toFixed(1)} µs per event × client; harness: ${harness}`);
        ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): clients that got every event`, unit: '', value: complete, min: clients, target: `${clients}` });
        ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): commit → receipt p50`, unit: 'ms', value: percentile(latencies, 50), max: 10, target: '≤ 10 ms' });
        ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): commit → receipt p99`, unit: 'ms', value: percentile(latencies, 99), max: 50, target: '≤ 50 ms' });
        ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): svc CPU per event × client`, unit: 'µs', value: perPair });
      } finally {
        await streams.stop();
      }
    } finally {
      await svc.stop();
    }
  }
  const one = perClient.find((p) => p.clients === 1);
  const most = perClient.at(-1);
  if (one && most && most !== one) {
    // The write path's CPU is in every figure; the difference to 1 client is what each further stream costs.
    const marginal = ((most.cpu / most.written - one.cpu / one.written) / (most.clients - 1)) * 1e6;
    ctx.valueCell({ workload: 'W10', measure: `svc CPU per event for each client beyond the first (${most.clients} vs 1)`, unit: 'µs', value: marginal });
    ctx.valueCell({ workload: 'W10', measure: `CPU per event × client, ${most.clients} clients ÷ 1 client`, unit: '×', value: most.perPair / one.perPair, max: 0.25, target: '≤ 0.25× (the issue\'s bar)' });
  }
}
