/**
 * Resolves in a later turn of the event loop, after pending I/O callbacks (requests, timers) have run. Work that
 * goes on in batches awaits it between two batches: on SQLite every statement runs synchronously and a chain of
 * awaits on settled promises never leaves the microtask queue, so without it a long job of many short batches
 * would still keep every request waiting until it ends.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const waiting: Array<() => void> = [];
let releasing = false;

/**
 * Like nextTurn, but one caller a turn: work that many requests do in slices at once (filtered feed reads walking
 * their scan windows) takes one slice per turn of the event loop between them all, so a request that arrives waits
 * behind one slice, not behind one slice of each. An idle loop turns in microseconds: alone, a caller loses nothing.
 */
export function ownTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!releasing) {
      releasing = true;
      setImmediate(releaseOne);
    }
  });
}

// An immediate set while immediates run waits for the next turn: between two releases, I/O and timers get theirs.
function releaseOne(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(releaseOne);
  else releasing = false;
}

/**
 * Work of many short slices on the event loop (an answer built from every collection): the slices share a turn up to
 * 8 ms, as the feed's filtered reads do (feed-store.ts), then the work waits for its own next turn (ownTurn), so a
 * request that arrives meanwhile waits behind one turn's slices at most. Between two slices `await pace.slice()`;
 * `spent()` and `next()` apart where something is done before yielding (jsonInSlices turns its text into bytes).
 */
export class Pace {
  #turnStarted = performance.now();

  spent(): boolean {
    return performance.now() - this.#turnStarted >= PACE_TURN_MS;
  }

  async next(): Promise<void> {
    await ownTurn();
    this.#turnStarted = performance.now();
  }

  async slice(): Promise<void> {
    if (this.spent()) await this.next();
  }
}

const PACE_TURN_MS = 8;
