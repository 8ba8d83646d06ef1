import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SERVER = 'packages/server/src/';

/**
 * Violations the tree has today, as `from → to` under packages/server/src. The list only shrinks: a new violation
 * fails the test, and so does an entry that no longer occurs (delete it then).
 */
const KNOWN = [
  // Left for a follow-up: a token's collections are read with the token (one query authenticates a request), so auth
  // reads the collections table; the collection type belongs below both.
  'auth/api-tokens.ts → records/collections-store.ts',
  'auth/api-tokens-store.ts → records/collections-store.ts',
];

interface Violation {
  rule: string;
  pair: string;
}

/** Every violation of the repository's rules in `roots`, cruised from `baseDir`, as `rule: from → to`. */
async function violationsIn(baseDir: string, roots: string[]): Promise<Violation[]> {
  const options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
  const { output } = await cruise(roots, { ...options, baseDir });
  if (typeof output === 'string') throw new Error('dependency-cruiser returned text, not a result');
  const short = (path: string) => (path.startsWith(SERVER) ? path.slice(SERVER.length) : path);
  return output.summary.violations.map((v) => ({ rule: v.rule.name, pair: `${short(v.from)} → ${short(v.to)}` }));
}

const listed = (vs: Violation[]): string[] => vs.map((v) => `${v.rule}: ${v.pair}`).sort();

describe('dependency rules (.dependency-cruiser.cjs)', () => {
  it('the server and the SDK keep to their layers, apart from the known violations', async () => {
    const found = await violationsIn(ROOT, ['packages/server/src', 'packages/sdk/src']);
    const unexpected = found.filter((v) => !KNOWN.includes(v.pair));
    const fixed = KNOWN.filter((pair) => !found.some((v) => v.pair === pair));
    // New ones: fix the import, never extend KNOWN. Fixed ones: delete them from KNOWN.
    expect({ new: listed(unexpected), fixed }).toEqual({ new: [], fixed: [] });
  });

  describe('on a fixture that breaks them', () => {
    const fixture = mkdtempSync(join(tmpdir(), 'svc-depcruise-'));
    afterAll(() => rmSync(fixture, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(fixture, path)), { recursive: true });
      writeFileSync(join(fixture, path), text);
    };

    it('reports a cycle, an upward import, a type-only forbidden import, the SDK reaching into the server and a dependency of the verifier', async () => {
      write(`${SERVER}lib/clock.ts`, "import { slot } from '../webhooks/handoff.js';\nexport const now = () => slot;\n");
      write(`${SERVER}webhooks/handoff.ts`, "import { now } from '../lib/clock.js';\nimport type { Row } from '../records/records-store.js';\nexport const slot = 1;\nexport const at = (r: Row) => now() + r.id.length;\n");
      write(`${SERVER}records/records-store.ts`, 'export interface Row { id: string }\n');
      write('packages/sdk/src/client/index.ts', "import { now } from '../../../server/src/lib/clock.js';\nexport const t = now;\n");
      write('packages/sdk/src/verify/index.ts', "import { createHmac } from 'node:crypto';\nexport const h = createHmac;\n");

      const found = listed(await violationsIn(fixture, ['packages/server/src', 'packages/sdk/src']));
      expect(found).toEqual([
        'lib-imports-only-lib: lib/clock.ts → webhooks/handoff.ts',
        'no-circular: lib/clock.ts → webhooks/handoff.ts',
        'sdk-imports-no-server: packages/sdk/src/client/index.ts → lib/clock.ts',
        'verify-imports-nothing-outside-itself: packages/sdk/src/verify/index.ts → crypto',
        'webhooks-imports-no-records: webhooks/handoff.ts → records/records-store.ts',
      ]);
    });
  });

  describe('on a fixture that breaks the feed\'s homes', () => {
    const fixture = mkdtempSync(join(tmpdir(), 'svc-depcruise-'));
    afterAll(() => rmSync(fixture, { recursive: true, force: true }));
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(fixture, path)), { recursive: true });
      writeFileSync(join(fixture, path), text);
    };

    it('reports the delivery engine reading the feed, and a route writing a stream frame', async () => {
      write(`${SERVER}events/event-write.ts`, 'export const writeEvents = 1;\n');
      write(`${SERVER}events/feed-store.ts`, 'export const readFeed = 1;\n');
      write(`${SERVER}events/sse-frames.ts`, 'export const PING_FRAME = 1;\n');
      write(`${SERVER}webhooks/queue/enqueue.ts`, "import { writeEvents } from '../../events/event-write.js';\nimport { readFeed } from '../../events/feed-store.js';\nexport const e = writeEvents + readFeed;\n");
      write(`${SERVER}http/routes/events.ts`, "import { PING_FRAME } from '../../events/sse-frames.js';\nexport const p = PING_FRAME;\n");

      const found = listed(await violationsIn(fixture, ['packages/server/src']));
      expect(found).toEqual([
        'sse-written-only-in-events: http/routes/events.ts → events/sse-frames.ts',
        'webhooks-reaches-events-only-to-write: webhooks/queue/enqueue.ts → events/feed-store.ts',
      ]);
    });
  });
});
