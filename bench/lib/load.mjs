import { fileURLToPath } from 'node:url';
import { CORES, runJson } from './proc.mjs';

const CHILD = fileURLToPath(new URL('./load-child.mjs', import.meta.url));
const PACED = fileURLToPath(new URL('./paced-child.mjs', import.meta.url));

/** One autocannon run from a separate process on the load core. */
export async function load(cfg) {
  const r = await runJson(CORES.load, [process.execPath, CHILD, JSON.stringify(cfg)], { timeoutMs: (cfg.duration + 60) * 1000 });
  if (r.non2xx > 0 || r.errors > 0) r.warning = `${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts`;
  return r;
}

/** Open-loop requests at a steady `rate` per second for `duration` seconds, from the load core (W6). */
export async function paced(cfg) {
  const r = await runJson(CORES.load, [process.execPath, PACED, JSON.stringify(cfg)], { timeoutMs: (cfg.duration + 60) * 1000 });
  if (r.non2xx > 0 || r.errors > 0) r.warning = `${r.non2xx} non-2xx, ${r.errors} errors`;
  return r;
}
