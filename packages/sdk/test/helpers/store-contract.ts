import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClaimOutcome, DedupeStore } from '../../src/verify/index.js';

export interface StoreHarness {
  store: DedupeStore;
  /** Instances of the same store on other connections, for the races; default `[store]`. */
  racers?: DedupeStore[];
  /** Lets `ms` pass for the store: a memory store's clock moves, a server's real clock runs. */
  wait(ms: number): Promise<void>;
  close?(): Promise<void>;
}

/** Short enough to wait for, long enough that a test's own round trips on a loaded machine finish inside it. */
const SHORT_TTL_SECONDS = 0.4;
const PAST_SHORT_TTL_MS = 600;
const LONG_TTL_SECONDS = 60;
const RACERS = 50;

const newId = () => `del_${randomBytes(10).toString('hex')}`;
const newToken = () => randomBytes(16).toString('hex');

function tally(outcomes: ClaimOutcome[]): Record<ClaimOutcome, number> {
  const counts = { claimed: 0, in_progress: 0, done: 0 };
  for (const o of outcomes) counts[o]++;
  return counts;
}

/**
 * What every `DedupeStore` must do, run against each store on a real backend. Each test uses fresh ids, so one store
 * serves the whole suite.
 */
export function describeStoreContract(name: string, makeStore: () => Promise<StoreHarness>): void {
  describe(`DedupeStore contract: ${name}`, () => {
    let h: StoreHarness;

    beforeAll(async () => {
      h = await makeStore();
    });
    afterAll(() => h?.close?.());

    async function race(id: string): Promise<Record<ClaimOutcome, number>> {
      const racers = h.racers ?? [h.store];
      const outcomes = await Promise.all(
        Array.from({ length: RACERS }, (_, i) => racers[i % racers.length]!.claim(id, newToken(), LONG_TTL_SECONDS)),
      );
      return tally(outcomes);
    }

    it('gives the first claim to one caller only, and tells the others it is in progress', async () => {
      const [id, other] = [newId(), newId()];
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('in_progress');
      expect(await h.store.claim(other, newToken(), LONG_TTL_SECONDS)).toBe('claimed');
    });

    it(`gives exactly one of ${RACERS} concurrent claims, on fresh and on expired claims`, async () => {
      for (let round = 0; round < 3; round++) {
        expect(await race(newId())).toEqual({ claimed: 1, in_progress: RACERS - 1, done: 0 });
      }
      const expired = newId();
      expect(await h.store.claim(expired, newToken(), SHORT_TTL_SECONDS)).toBe('claimed');
      await h.wait(PAST_SHORT_TTL_MS);
      expect(await race(expired)).toEqual({ claimed: 1, in_progress: RACERS - 1, done: 0 });
    });

    it('answers done after complete, to every later claim, and keeps it done', async () => {
      const id = newId();
      const token = newToken();
      expect(await h.store.claim(id, token, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.complete(id, token, LONG_TTL_SECONDS)).toBe(true);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('done');
      expect(await race(id)).toEqual({ claimed: 0, in_progress: 0, done: RACERS });
      expect(await h.store.release(id, token)).toBe(false);
      expect(await h.store.complete(id, newToken(), LONG_TTL_SECONDS)).toBe(false);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('done');
    });

    it('lets the id be claimed again at once after release, and only its holder can release it', async () => {
      const id = newId();
      const first = newToken();
      expect(await h.store.claim(id, first, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.release(id, newToken())).toBe(false);
      expect(await h.store.complete(id, newToken(), LONG_TTL_SECONDS)).toBe(false);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('in_progress');
      expect(await h.store.release(id, first)).toBe(true);
      expect(await h.store.release(id, first)).toBe(false);
      const second = newToken();
      expect(await h.store.claim(id, second, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.complete(id, second, LONG_TTL_SECONDS)).toBe(true);
      expect(await h.store.release(newId(), newToken())).toBe(false);
    });

    it('lets an in-progress claim whose TTL passed (a crashed run) be claimed again', async () => {
      const id = newId();
      expect(await h.store.claim(id, newToken(), SHORT_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('in_progress');
      await h.wait(PAST_SHORT_TTL_MS);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('in_progress');
    });

    it("fences off a stale run: its complete and release leave the run that took over alone", async () => {
      const id = newId();
      const stale = newToken();
      const current = newToken();
      expect(await h.store.claim(id, stale, SHORT_TTL_SECONDS)).toBe('claimed');
      await h.wait(PAST_SHORT_TTL_MS);
      expect(await h.store.claim(id, current, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.release(id, stale)).toBe(false);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('in_progress');
      expect(await h.store.complete(id, stale, LONG_TTL_SECONDS)).toBe(false);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('in_progress');
      expect(await h.store.complete(id, current, LONG_TTL_SECONDS)).toBe(true);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('done');
    });

    it('records a success whose claim expired when nobody took it over: the handler did run', async () => {
      const id = newId();
      const token = newToken();
      expect(await h.store.claim(id, token, SHORT_TTL_SECONDS)).toBe('claimed');
      await h.wait(PAST_SHORT_TTL_MS);
      expect(await h.store.complete(id, token, LONG_TTL_SECONDS)).toBe(true);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('done');
    });

    it('forgets a done id once the done TTL has passed', async () => {
      const id = newId();
      const token = newToken();
      expect(await h.store.claim(id, token, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.complete(id, token, SHORT_TTL_SECONDS)).toBe(true);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('done');
      await h.wait(PAST_SHORT_TTL_MS);
      expect(await h.store.claim(id, newToken(), LONG_TTL_SECONDS)).toBe('claimed');
    });

    it('keeps ids apart: a claim, release or completion of one never touches another', async () => {
      const [a, b] = [newId(), newId()];
      const [ta, tb] = [newToken(), newToken()];
      expect(await h.store.claim(a, ta, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.claim(b, tb, LONG_TTL_SECONDS)).toBe('claimed');
      expect(await h.store.complete(a, ta, LONG_TTL_SECONDS)).toBe(true);
      expect(await h.store.release(b, tb)).toBe(true);
      expect(await h.store.claim(a, newToken(), LONG_TTL_SECONDS)).toBe('done');
      expect(await h.store.claim(b, newToken(), LONG_TTL_SECONDS)).toBe('claimed');
    });
  });
}
