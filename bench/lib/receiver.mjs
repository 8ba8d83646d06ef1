import { fileURLToPath } from 'node:url';
import { CORES, spawnOn, stop } from './proc.mjs';

const CHILD = fileURLToPath(new URL('./receiver-child.mjs', import.meta.url));

/** Starts the HTTPS receiver on the load core with `ports` listening ports. */
export async function startReceiver({ ports, tls, logFile }) {
  const child = spawnOn(CORES.load, [process.execPath, CHILD, JSON.stringify({ ports, keyFile: tls.keyFile, certFile: tls.certFile })], { ipc: true, logFile });
  const waiters = [];
  child.on('message', (m) => {
    const i = waiters.findIndex((w) => w.match(m));
    if (i >= 0) waiters.splice(i, 1)[0].resolve(m);
  });
  const next = (match, timeoutMs) =>
    new Promise((resolve, reject) => {
      const w = { match, resolve };
      waiters.push(w);
      const t = setTimeout(() => {
        const i = waiters.indexOf(w);
        if (i >= 0) waiters.splice(i, 1);
        reject(new Error(`receiver: timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      t.unref();
      child.exitPromise.then(() => reject(new Error('receiver exited')));
    });
  const ready = await next((m) => m.ready, 20_000);
  return {
    ports: ready.ports,
    urls: ready.ports.map((p) => `https://127.0.0.1:${p}/hook`),
    /** Resets the counter; the returned promise resolves when `n` deliveries have been answered. */
    async expect(n, { delayMs = 0, latency = false, timeoutMs = 300_000 } = {}) {
      const ack = next((m) => m.ack, 10_000);
      child.send({ cmd: 'expect', n, delayMs, latency });
      await ack;
      const done = next((m) => m.done, timeoutMs);
      done.catch(() => {});
      return done;
    },
    async stats(latencies = false) {
      const p = next((m) => m.stats, 10_000);
      child.send({ cmd: 'stats', latencies });
      return p;
    },
    async close() {
      try {
        child.send({ cmd: 'close' });
      } catch {}
      await stop(child, 5000);
    },
  };
}
