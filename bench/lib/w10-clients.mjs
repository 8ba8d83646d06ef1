// W10's SSE clients, in a process of their own on the load core (bench/lib/w10-stream.mjs starts it): the harness
// paces the writes on its own thread, and at 200 clients × 200 events/s the clients' 40,000 frames a second would
// queue behind that work (and it behind them). Each frame's receipt time is taken when its last bytes arrive, before
// any parsing; occurredAt is cut out of the raw bytes by position, with no HTTP parser and no JSON.parse.
//
// argv: <svc url> <token> <clients>. Sends 'ready' once every stream is open. Told { expect, timeoutMs } (the writes
// are done), it waits until every client has `expect` events or the time is up, answers one
// { counts, latencies, cpuSeconds, lag } (CPU and event-loop delay from 'ready' on) and exits.
import { connect } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const [url, token, clientsArg] = process.argv.slice(2);
const clients = Number(clientsArg);
const counts = new Array(clients).fill(0);
/** Receipt time minus occurredAt, ms, for every event every client got. */
const latencies = [];
const OCCURRED = '"occurredAt":"';
// An ISO 8601 instant with milliseconds, as svc writes it: 2026-11-24T02:13:10.123Z.
const ISO_LENGTH = 24;
// Enough of the text's tail to hold a marker and its instant cut by a TCP segment boundary.
const TAIL = OCCURRED.length + ISO_LENGTH;

/**
 * Counts the events of a chunk of the stream's raw bytes (HTTP chunked framing included: svc writes whole frames,
 * so a chunk-size line never falls inside one). An event counts once its frame's closing blank line has arrived.
 * Returns the text to keep for the next chunk.
 */
function scan(i, text, at) {
  let from = 0;
  for (;;) {
    const k = text.indexOf(OCCURRED, from);
    if (k < 0) return text.slice(Math.max(from, text.length - TAIL));
    const end = text.indexOf('\n\n', k);
    if (end < 0) return text.slice(k);
    counts[i]++;
    latencies.push(at - Date.parse(text.slice(k + OCCURRED.length, k + OCCURRED.length + ISO_LENGTH)));
    from = end + 2;
  }
}

/**
 * One SSE client on a plain TCP connection: a hand-written request and a scan of the raw answer. Node's HTTP client
 * (parser, chunked decoding, stream events, UTF-8 decoding) cost far more per chunk, and with 200 clients reading
 * the same burst, the last one's receipt would wait for the others' parsing.
 */
function open(i) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.setEncoding('latin1');
    socket.once('error', reject);
    socket.on('connect', () => {
      socket.write(`GET /api/v1/events/stream HTTP/1.1\r\nhost: ${hostname}:${port}\r\naccept: text/event-stream\r\nauthorization: Bearer ${token}\r\n\r\n`);
    });
    let head = '';
    let rest = '';
    const onData = (chunk) => {
      const at = Date.now();
      if (head !== null) {
        head += chunk;
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!head.startsWith('HTTP/1.1 200')) return reject(new Error(`stream: ${head.slice(0, head.indexOf('\r\n'))}`));
        rest = head.slice(end + 4);
        head = null;
        resolve(socket);
      } else {
        rest += chunk;
      }
      rest = scan(i, rest, at);
    };
    socket.on('data', onData);
  });
}

// Each sample is the interval between two ticks of a 5 ms timer: what exceeds 5 ms is the delay.
const LAG_TICK_MS = 5;
const lag = monitorEventLoopDelay({ resolution: LAG_TICK_MS });
const streams = await Promise.all(Array.from({ length: clients }, (_, i) => open(i)));
const cpu0 = process.cpuUsage();
lag.enable();
process.send('ready');
process.once('message', async ({ expect, timeoutMs }) => {
  const deadline = Date.now() + timeoutMs;
  while (counts.some((c) => c < expect) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  lag.disable();
  const cpu = process.cpuUsage(cpu0);
  for (const s of streams) s.destroy();
  process.send(
    { counts, latencies, cpuSeconds: (cpu.user + cpu.system) / 1e6, lag: { p50: lag.percentile(50) / 1e6 - LAG_TICK_MS, p99: lag.percentile(99) / 1e6 - LAG_TICK_MS } },
    () => process.exit(0),
  );
});
