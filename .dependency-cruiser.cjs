/**
 * The layers of DESIGN section 1, checked on every `npm test` (a violation fails the build like a failing test).
 * Arrows point inward: events <- commands <- projections / application <- adapters <- composition root.
 *
 *   src/events        imports nothing of ours
 *   src/commands      events only
 *   src/projections   events only (its ports live beside it)
 *   src/application   the domain; never an adapter nor the outer ring
 *   src/adapters/X    the inner layers; never another adapter (X -> Y: share through application)
 *   heartbeat, audit  the inner layers; they receive their stores, they do not open them
 *   outer ring        compositionRoot.ts (the only place that picks adapters), mailbox.ts, server.ts, index.ts, cli/
 *
 * The shared kernel (errors.ts, config.ts, tokens.ts, startupError.ts, packageVersion.ts, support/) may be imported by every
 * layer but events, and imports nothing of ours beyond itself.
 */
const KERNEL = '^src/(errors|config|tokens|startupError|packageVersion)[.]ts$|^src/support/';
const OUTER = '^src/(compositionRoot|mailbox|server|index)[.]ts$|^src/cli/';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle makes two modules one; break it by moving the shared part inward.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'events-import-nothing-of-ours',
      severity: 'error',
      comment: 'Events are the innermost layer: their stored shapes must not follow an input schema.',
      from: {
        path: '^src/events/',
        // TEMPORARY (issue 9, Deliver 2): events/types.ts still takes the stored task shape from commands/*; the helper that
        // gives events their own schemas removes this import. The lead deletes this exception after merging that branch.
        pathNot: '^src/events/types[.]ts$',
      },
      to: { path: '^src/', pathNot: '^src/events/' },
    },
    {
      name: 'events-types-only-commands-for-now',
      severity: 'error',
      comment: 'TEMPORARY companion of the exception above: events/types.ts may reach commands/* and nothing else of ours.',
      from: { path: '^src/events/types[.]ts$' },
      to: { path: '^src/', pathNot: '^src/(events|commands)/' },
    },
    {
      name: 'commands-only-events',
      severity: 'error',
      comment: 'Commands (schemas and pure deciders) may use events and the shared error type only.',
      from: { path: '^src/commands/' },
      to: { path: '^src/', pathNot: ['^src/(commands|events)/', '^src/errors[.]ts$'] },
    },
    {
      name: 'projections-only-events',
      severity: 'error',
      comment: 'The read model is pure over events; its ports live beside it. Input parsing belongs to the application layer.',
      from: {
        path: '^src/projections/',
        // TEMPORARY (issue 9, Deliver 6): projections/listQuery.ts parses list input with commands/*; the helper that moves
        // list-query parsing to the application layer removes it. The lead deletes this exception after merging that branch.
        pathNot: '^src/projections/listQuery[.]ts$',
      },
      to: { path: '^src/', pathNot: ['^src/(projections|events)/', KERNEL] },
    },
    {
      name: 'list-query-only-commands-for-now',
      severity: 'error',
      comment: 'TEMPORARY companion of the exception above: listQuery.ts may reach commands/* but no outer layer.',
      from: { path: '^src/projections/listQuery[.]ts$' },
      to: { path: '^src/', pathNot: ['^src/(projections|events|commands)/', KERNEL] },
    },
    {
      name: 'application-no-adapters',
      severity: 'error',
      comment: 'The application layer talks to ports; the composition root gives it adapters.',
      from: { path: '^src/application/' },
      to: { path: ['^src/(adapters|heartbeat|audit)/', OUTER] },
    },
    {
      name: 'adapters-not-sideways',
      severity: 'error',
      comment: 'An adapter never imports another adapter; what two adapters share lives in the application layer.',
      from: { path: '^src/adapters/([^/]+)/' },
      to: { path: '^src/adapters/', pathNot: '^src/adapters/$1/' },
    },
    {
      name: 'adapters-not-outward',
      severity: 'error',
      comment: 'Adapters depend on the inner layers only, never on the composition root, the facade or the tools built on them.',
      from: { path: '^src/adapters/' },
      to: { path: ['^src/(heartbeat|audit)/', OUTER] },
    },
    {
      name: 'only-the-composition-root-wires',
      severity: 'error',
      comment: 'Only the outer ring picks adapters: heartbeat, audit and the CLI receive their stores from the composition root. ' +
        'The CLI may use the HTTP API client, which is what a command-line client is for.',
      from: { path: '^src/', pathNot: ['^src/adapters/', '^src/(compositionRoot|server)[.]ts$'] },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'tools-do-not-wire',
      severity: 'error',
      comment: 'Heartbeat and audit are built by the outer ring; they never reach into it.',
      from: { path: '^src/(heartbeat|audit)/' },
      to: { path: OUTER },
    },
    {
      name: 'kernel-stays-small',
      severity: 'error',
      comment: 'The shared kernel is imported by every layer, so it imports nothing of ours beyond itself.',
      from: { path: KERNEL },
      to: { path: '^src/', pathNot: KERNEL },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // `import type` counts: a type import is an arrow too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
