import { randomInt } from 'node:crypto';

/** A small seeded generator (mulberry32): the same seed gives the same numbers in [0, 1), so a failing run can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed in the environment variable `name` when it is set (to replay a run), else a new one. */
export function seedFrom(name: string): number {
  const given = process.env[name];
  if (given === undefined || given === '') return randomInt(2 ** 31);
  const seed = Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`${name}=${given}: a seed is a whole number ≥ 0`);
  return seed;
}
