// The webhook receiver: HTTPS on 127.0.0.1 (one port per target), verifies nothing, counts, answers 200 "ok"
// (optionally after a delay). Driven over IPC by the harness. In latency mode it also reads each envelope's
// record.createdAt and keeps commit → receipt latencies.
import https from 'node:https';
import { readFileSync } from 'node:fs';

const cfg = JSON.parse(process.argv[2]);
const tls = { key: readFileSync(cfg.keyFile), cert: readFileSync(cfg.certFile) };
let delayMs = 0;
let latencyMode = false;
let expected = Infinity;
let count = 0;
let firstNs = null;
let lastNs = null;
// The times of the deliveries at 10 % and 90 % of the expected count: the steady middle of a drain (W7).
let marks = { at10: Infinity, at90: Infinity, ns10: null, ns90: null };
let latencies = [];
const perPort = new Map();

const wallMs = () => performance.timeOrigin + performance.now();

function handler(port) {
  return (req, res) => {
    const chunks = [];
    req.on('data', (c) => latencyMode && chunks.push(c));
    req.on('end', () => {
      const at = wallMs();
      const answer = () => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        res.end('ok');
        count++;
        perPort.set(port, (perPort.get(port) ?? 0) + 1);
        const ns = process.hrtime.bigint();
        firstNs ??= ns;
        lastNs = ns;
        if (count === marks.at10) marks.ns10 = ns;
        if (count === marks.at90) marks.ns90 = ns;
        if (latencyMode) {
          try {
            const env = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            latencies.push(at - Date.parse(env.payload.record.createdAt));
          } catch {}
        }
        if (count === expected) {
          const middle = marks.ns10 !== null && marks.ns90 !== null ? { middleCount: marks.at90 - marks.at10, middleNs: String(marks.ns90 - marks.ns10) } : {};
          process.send({ done: true, count, firstNs: String(firstNs), lastNs: String(lastNs), ...middle });
        }
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  };
}

const servers = [];
for (let i = 0; i < cfg.ports; i++) {
  const port = cfg.portList?.[i] ?? 0;
  const server = https.createServer({ ...tls, keepAliveTimeout: 60_000 });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  server.on('request', handler(server.address().port));
  servers.push(server);
}

process.on('message', (m) => {
  if (m.cmd === 'expect') {
    count = 0;
    firstNs = lastNs = null;
    latencies = [];
    perPort.clear();
    expected = m.n;
    marks = { at10: Math.max(1, Math.ceil(m.n * 0.1)), at90: Math.floor(m.n * 0.9), ns10: null, ns90: null };
    delayMs = m.delayMs ?? 0;
    latencyMode = !!m.latency;
    process.send({ ack: true });
  } else if (m.cmd === 'stats') {
    process.send({ stats: true, count, firstNs: firstNs && String(firstNs), lastNs: lastNs && String(lastNs), latencies: m.latencies ? latencies : undefined, perPort: Object.fromEntries(perPort) });
  } else if (m.cmd === 'close') {
    for (const s of servers) s.closeAllConnections?.(), s.close();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true, ports: servers.map((s) => s.address().port) });
