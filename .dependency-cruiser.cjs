/**
 * svc's layers, checked in `npm test` (packages/server/test/unit/dependency-rules.test.ts). Imports run one way:
 *
 *   lib + errors.ts  ←  config  ←  db  ←  context.ts  ←  auth | records | webhooks | events  ←  http  ←  app.ts, runtime.ts,
 *   maintenance.ts  ←  cli (the process entry, `svc`)
 *
 * errors.ts (the catalogue) imports nothing, so it sits at the bottom beside lib. context.ts is the type-only hub
 * every domain module receives: it names config, db and lib types, so it sits just above db and below the domains;
 * a domain type it needs belongs below it. records may use webhooks (a write enqueues its jobs) and the feed's mark
 * (events/feed-mark.ts, for the "make a field required" check); webhooks never uses
 * records; auth uses neither; events (the feed: its writes, reads and streams) uses none of them, and webhooks reaches
 * into it only to write an event with its jobs. Type-only imports count: the rules are about the design, not the emitted code.
 * Paths are relative to the repository root, where the check runs.
 */
const S = '^packages/server/src/';
/** Files under any of the server's source folders or root files named, e.g. within('lib/', 'errors\\.ts$'). */
const within = (...parts) => `${S}(${parts.join('|')})`;
const LIB = ['lib/', 'errors\\.ts$'];
const UP_TO_DB = [...LIB, 'config/', 'db/'];
// tracing (SPEC §15) sits beside config: a process-wide runtime every domain may open a span with.
const UP_TO_CONTEXT = [...UP_TO_DB, 'context\\.ts$', 'tracing/'];

/**
 * Files matching `from` may import only files matching `allowed` (within the server's source). The pairs that have
 * a rule of their own (auth → records, webhooks → records) are allowed here so each violation is reported once.
 */
const onlyBelow = (name, comment, from, allowed) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: S, pathNot: allowed },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one: neither can be understood, tested or loaded without the other.',
      severity: 'error',
      from: { path: S },
      to: { circular: true },
    },
    {
      name: 'no-unresolvable',
      comment: 'An import the cruiser cannot follow is one no other rule can judge.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    onlyBelow('lib-imports-only-lib', 'lib holds pure helpers; it may name the error catalogue and nothing else of svc.', within('lib/'), within(...LIB)),
    onlyBelow('errors-imports-nothing', 'The error catalogue is the bottom of the graph.', within('errors\\.ts$'), within('errors\\.ts$')),
    onlyBelow('config-imports-only-lib', 'config reads the environment; it knows nothing of storage or the domains.', within('config/'), within(...LIB, 'config/')),
    onlyBelow('tracing-imports-only-lib-config', 'tracing reads its settings and exports spans; it knows no domain.', within('tracing/'), within(...LIB, 'config/', 'tracing/')),
    onlyBelow('db-imports-only-lib-config', 'db connects and migrates; it knows no domain.', within('db/'), within(...UP_TO_DB)),
    onlyBelow('context-imports-only-lib-config-db', 'The context type sits below the domains that receive it.', within('context\\.ts$'), within(...UP_TO_DB)),
    {
      name: 'auth-imports-no-records-or-webhooks',
      comment: 'auth stands beside records and webhooks, not on them.',
      severity: 'error',
      from: { path: within('auth/') },
      to: { path: within('records/', 'webhooks/') },
    },
    {
      name: 'webhooks-imports-no-records',
      comment: 'records enqueues deliveries through webhooks; the other direction would close a loop between them.',
      severity: 'error',
      from: { path: within('webhooks/') },
      to: { path: within('records/') },
    },
    onlyBelow('auth-imports-only-lower-layers', 'auth may use lib, config, db and the context.', within('auth/'), within(...UP_TO_CONTEXT, 'auth/', 'records/', 'webhooks/')),
    onlyBelow(
      'records-imports-only-lower-layers',
      'records may use lib, config, db, the context and webhooks, and of the feed only its mark (a schema check finds the records written during its read by their events after it).',
      within('records/'),
      within(...UP_TO_CONTEXT, 'records/', 'webhooks/', 'events/feed-mark\\.ts$', 'events/feed-position\\.ts$'),
    ),
    onlyBelow('events-imports-only-lower-layers', 'events holds the feed: lib, config, db and the context.', within('events/'), within(...UP_TO_CONTEXT, 'events/')),
    onlyBelow('webhooks-imports-only-lower-layers', 'webhooks may use lib, config, db and the context.', within('webhooks/'), within(...UP_TO_CONTEXT, 'webhooks/', 'records/', 'events/')),
    {
      name: 'webhooks-reaches-events-only-to-write',
      comment:
        'The events table\'s writes are made in one place, events/event-write.ts (their inserts, which enqueue runs with the jobs in the record write\'s transaction); the feed\'s reads and streams are no business of the delivery engine.',
      severity: 'error',
      from: { path: within('webhooks/') },
      to: { path: within('events/'), pathNot: within('events/event-write\\.ts$') },
    },
    {
      name: 'sse-written-only-in-events',
      comment:
        'Every byte of an event stream is made in events/sse-frames.ts and written by events/stream-connection.ts; routes hand the fan-out a response and never write a frame themselves.',
      severity: 'error',
      from: { path: S, pathNot: within('events/') },
      to: { path: within('events/sse-frames\\.ts$', 'events/stream-connection\\.ts$') },
    },
    {
      name: 'http-imported-only-from-the-top',
      comment: 'Routes and plugins are assembled by app.ts; nothing below them reaches up into HTTP.',
      severity: 'error',
      from: { pathNot: within('http/', 'app\\.ts$', 'runtime\\.ts$', 'cli/') },
      to: { path: within('http/') },
    },
    {
      name: 'cli-imported-by-nothing',
      comment: 'The command is the process entry: nothing imports it.',
      severity: 'error',
      from: { pathNot: within('cli/') },
      to: { path: within('cli/') },
    },
    {
      name: 'app-runtime-imported-only-by-the-entry',
      comment: 'app.ts, runtime.ts and maintenance.ts assemble the process; only they and the command use them.',
      severity: 'error',
      from: { path: S, pathNot: within('app\\.ts$', 'runtime\\.ts$', 'maintenance\\.ts$', 'cli/') },
      to: { path: within('app\\.ts$', 'runtime\\.ts$', 'maintenance\\.ts$') },
    },
    {
      name: 'sdk-imports-no-server',
      comment: 'svc-sdk is published alone: it talks to the server over HTTP only.',
      severity: 'error',
      from: { path: '^packages/sdk/' },
      to: { path: '^packages/server/' },
    },
    {
      name: 'verify-imports-nothing-outside-itself',
      comment: 'svc-sdk/verify has no dependencies at all (Web Crypto is a global): no npm package, no Node module, no client code.',
      severity: 'error',
      from: { path: '^packages/sdk/src/verify/' },
      to: { pathNot: '^packages/sdk/src/verify/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    // Type-only imports are part of the design too.
    tsPreCompilationDeps: true,
    // ESM-only packages (typebox) resolve through their `exports`; an unresolved import would escape every rule.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
