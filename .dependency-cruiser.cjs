/**
 * The layers of DESIGN section 1, checked on every `npm test` (a violation fails the build like a failing test).
 * Arrows point inward: events <- commands <- projections / application <- adapters <- composition root.
 *
 *   src/events        imports nothing of ours
 *   src/commands      events only (and the kernel's errors.ts and support/decimalText.ts)
 *   src/projections   events only (its ports live beside it)
 *   src/application   the domain; never an adapter nor the outer ring
 *   src/adapters/X    the inner layers; never another adapter (X -> Y: share through application)
 *   heartbeat, audit  the inner layers; they receive their stores, they do not open them
 *   outer ring        the compositions, one per kind of process, the only modules that pick adapters: compositionRoot.ts
 *                     (stores, containers, the heartbeat's and the auditors' stores), server.ts (HTTP API + MCP), stdioMcp.ts
 *                     (`mailbox mcp`); and what is built on them: mailbox.ts, index.ts, adminToken.ts, cli/
 *
 * The shared kernel (errors.ts, config.ts, tokens.ts, startupError.ts, packageVersion.ts, support/) may be imported by every
 * layer but events, and imports nothing of ours beyond itself.
 */
const KERNEL = '^src/(errors|config|tokens|startupError|packageVersion)[.]ts$|^src/support/';
const COMPOSITIONS = '^src/(compositionRoot|server|stdioMcp|startupChecks|startupBackends)[.]ts$';
const OUTER = '^src/(compositionRoot|server|stdioMcp|startupChecks|startupBackends|mailbox|index|adminToken)[.]ts$|^src/cli/';

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
      from: { path: '^src/events/' },
      to: { path: '^src/', pathNot: '^src/events/' },
    },
    {
      name: 'commands-only-events',
      severity: 'error',
      comment:
        'Commands (schemas and pure deciders) may use events, the shared error type and the decimal-text reader only ' +
        '(a page size in a query string or a flag is read as the environment variables are: plain decimal digits).',
      from: { path: '^src/commands/' },
      to: { path: '^src/', pathNot: ['^src/(commands|events)/', '^src/errors[.]ts$', '^src/support/decimalText[.]ts$'] },
    },
    {
      name: 'projections-only-events',
      severity: 'error',
      comment: 'The read model is pure over events; its ports live beside it. Input parsing belongs to the application layer.',
      from: { path: '^src/projections/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/(projections|events)/',
          KERNEL,
        ],
      },
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
      comment: 'Adapters depend on the inner layers only, never on the compositions or on what is built on them.',
      from: { path: '^src/adapters/' },
      to: { path: OUTER },
    },
    {
      name: 'adapters-implement-tool-ports-only',
      severity: 'error',
      comment: 'An adapter may implement a port of the heartbeat or audit tools (a type), never use their code.',
      from: { path: '^src/adapters/' },
      to: { path: '^src/(heartbeat|audit)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'only-the-composition-root-wires',
      severity: 'error',
      comment: 'Only the compositions pick adapters: heartbeat, audit and the CLI receive their stores from the composition root.',
      from: { path: '^src/', pathNot: ['^src/adapters/', '^src/cli/', COMPOSITIONS] },
      to: { path: '^src/adapters/' },
    },
    {
      name: 'the-cli-may-call-the-api',
      severity: 'error',
      comment: 'The CLI\'s client commands talk to a server through the HTTP API client, which is what a command-line client is for; ' +
        'any other adapter comes through a composition.',
      from: { path: '^src/cli/' },
      to: {
        path: '^src/adapters/',
        pathNot: [
          '^src/adapters/http/client/',
        ],
      },
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
