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
