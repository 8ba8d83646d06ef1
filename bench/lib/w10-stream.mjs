import { request } from 'node:http';
import { join } from 'node:path';
import { Agent } from 'undici';
import { cpuSeconds } from './proc.mjs';
import { percentile } from './stats.mjs';
import { admin, recordData, startSvc } from './svc.mjs';

/** One SSE client on its own connection; counts events by record id and keeps commit → receipt latencies. */
function sseClient(url, token, onEvent) {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/v1/events/stream`, { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } });
    req.once('error', reject);
    req.once('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split('\n').find((l) => l.startsWith('data: '));
          if (data) onEvent(JSON.parse(data.slice(6)), Date.now());
        }
      });
      res.on('error', () => {});
      resolve({ close: () => req.destroy() });
    });
    req.end();
  });
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
      const counts = new Array(clients).fill(0);
      const latencies = [];
      const streams = await Promise.all(
        Array.from({ length: clients }, (_, i) =>
          sseClient(svc.url, reader, (event, at) => {
            counts[i]++;
            latencies.push(at - Date.parse(event.occurredAt));
          }),
        ),
      );
      const cpu0 = cpuSeconds(svc.pid);
      const written = await pacedWrites(svc.url, writer, opts.streamRate, opts.streamSeconds);
      const deadline = Date.now() + 15_000;
      while (counts.some((c) => c < written) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      const cpu = cpuSeconds(svc.pid) - cpu0;
      for (const s of streams) s.close();
      const complete = counts.filter((c) => c === written).length;
      latencies.sort((x, y) => x - y);
      const perPair = (cpu / (written * clients)) * 1e6;
      perClient.push({ clients, perPair, cpu, written });
      ctx.progress('W10', `${clients} client(s): ${complete}/${clients} got all ${written} events; p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms; svc CPU ${cpu.toFixed(2)} s = ${perPair.toFixed(1)} µs per event × client`);
      ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): clients that got every event`, unit: '', value: complete, min: clients, target: `${clients}` });
      ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): commit → receipt p50`, unit: 'ms', value: percentile(latencies, 50), max: 10, target: '≤ 10 ms' });
      ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): commit → receipt p99`, unit: 'ms', value: percentile(latencies, 99), max: 50, target: '≤ 50 ms' });
      ctx.valueCell({ workload: 'W10', measure: `${clients} client(s): svc CPU per event × client`, unit: 'µs', value: perPair });
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
