import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

/**
 * Garbage a busy spell left in the old generation, collected once the process falls idle.
 *
 * The command runs Node with `--initial-old-space-size=96` (cli/main.ts): V8 makes no full collection while the old
 * generation is under 96 MB, so the feed's catch-up is not slowed by one every few pages. Its cost is that a busy
 * spell's promoted garbage stays: each request that waits its turn long enough outlives two scavenges and goes old
 * (190–230 bytes a request on a loaded machine, bench/README "W8's memory"), and nothing frees it, not even when the
 * load stops. V8's memory reducer, which collects when the allocation rate falls, never starts in a process that has
 * made no full collection, which the floor prevents. So a long-running svc climbed round after round of W1 (146–192
 * MB) and kept it idle.
 *
 * Here, checked once a second: when the event loop was at most IDLE_UTILIZATION busy over each of the last
 * IDLE_CHECKS seconds and the old generation has grown by GROWTH_BYTES since the last collection, one full collection
 * runs. Not after one quiet second: W6 (creates paced at 800/s, delivered by the same process) had a collection in
 * the ~2 s pause between its warm-up and its rounds, and its commit-to-receipt p50 went from 9–312 ms (the build
 * before) to 0.2–3.2 s in every one of eight alternated runs; after five quiet seconds, 35–266 ms against 20–312
 * ms. It holds the loop for what it takes (~5–20 ms for svc's 15–25 MB of live heap), at a moment nothing waited. Its
 * baseline is the old generation's size after it: a heap that is mostly live is not collected again until it has
 * grown by as much again.
 */
export const CHECK_EVERY_MS = 1000;
/** Checks in a row the loop must have been idle: a pause between two bursts is not idleness (V8's own memory reducer waits ~8 s). */
export const IDLE_CHECKS = 5;
export const IDLE_UTILIZATION = 0.05;
export const GROWTH_BYTES = 8 * 1024 * 1024;

export interface IdleCollectionOptions {
  everyMs?: number;
  idleChecks?: number;
  growthBytes?: number;
  idleUtilization?: number;
  /** Each collection: what the old generation held before and after it, and how long it took. */
  collected?: (c: { beforeBytes: number; afterBytes: number; ms: number }) => void;
}

/** Whether a collection is due: an idle loop, and enough growth since the last one. */
export const collectionDue = (s: { utilization: number; oldBytes: number; baselineBytes: number }, o: { idleUtilization: number; growthBytes: number }): boolean =>
  s.utilization <= o.idleUtilization && s.oldBytes - s.baselineBytes >= o.growthBytes;

/** The old generation's bytes in use (V8's `old_space`). */
export function oldSpaceBytes(): number {
  for (const s of getHeapSpaceStatistics()) if (s.space_name === 'old_space') return s.space_used_size;
  return 0;
}

/**
 * V8's full collection as a function. Node exposes it only to a process started with `--expose-gc`; the flag is set
 * for as long as a new context is made (whose global then has `gc`) and unset again, so the process's own global
 * never gets one.
 */
function fullCollection(): () => void {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as () => void;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * The decision and the collection, fed one second's event-loop utilization at a time (startIdleCollection's timer;
 * a test calls `check` itself).
 */
export function createIdleCollector(logger: Logger, options: IdleCollectionOptions = {}): { check(utilization: number): void } {
  const o = { idleChecks: options.idleChecks ?? IDLE_CHECKS, growthBytes: options.growthBytes ?? GROWTH_BYTES, idleUtilization: options.idleUtilization ?? IDLE_UTILIZATION };
  const gc = fullCollection();
  let baselineBytes = oldSpaceBytes();
  let idleInARow = 0;
  return {
    check(utilization: number): void {
      const oldBytes = oldSpaceBytes();
      // A full collection V8 made by itself (past the floor) leaves less than the baseline: start from there.
      if (oldBytes < baselineBytes) baselineBytes = oldBytes;
      idleInARow = utilization <= o.idleUtilization ? idleInARow + 1 : 0;
      if (idleInARow < o.idleChecks || !collectionDue({ utilization, oldBytes, baselineBytes }, o)) return;
      idleInARow = 0;
      const t0 = performance.now();
      gc();
      const ms = performance.now() - t0;
      baselineBytes = oldSpaceBytes();
      const c = { beforeBytes: oldBytes, afterBytes: baselineBytes, ms };
      options.collected?.(c);
      logger.debug({ oldSpaceBefore: c.beforeBytes, oldSpaceAfter: c.afterBytes, ms: Math.round(ms * 10) / 10 }, 'idle: old generation collected');
    },
  };
}

/** Starts the idle collection; the function returned stops it. Its timer keeps no process alive. */
export function startIdleCollection(logger: Logger, options: IdleCollectionOptions = {}): () => void {
  const collector = createIdleCollector(logger, options);
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    collector.check(utilization);
    // A collection's own time is not the next second's load.
    last = performance.eventLoopUtilization();
  }, options.everyMs ?? CHECK_EVERY_MS);
  timer.unref();
  return () => clearInterval(timer);
}
