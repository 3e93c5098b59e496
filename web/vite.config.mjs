// The console's build: web/ -> dist/console, served by the API server at /console (src/adapters/http/routes/consoleRoutes.ts).
// No inline script (the CSP forbids it), no asset inlined as a data: URL, nothing fetched at build or run time.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  logLevel: 'warn',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
  },
});
